"""Conversations: what the model is sent, titles, and edits that rewrite saved turns."""

from __future__ import annotations

import pytest

from desktop.chat import DEFAULT_TITLE, Conversation, Turn

pytestmark = pytest.mark.fast


def test_the_model_gets_the_system_prompt_and_turns_but_not_the_reasoning() -> None:
    chat = Conversation(system_prompt="Be brief.")
    chat.turns = [Turn("user", "hi"), Turn("assistant", "hello", reasoning="greet back")]
    sent = chat.messages()
    assert [(m.role, m.content) for m in sent] == [
        ("system", "Be brief."),
        ("user", "hi"),
        ("assistant", "hello"),
    ]


def test_a_chat_is_titled_from_its_first_question_once() -> None:
    chat = Conversation()
    assert chat.title == DEFAULT_TITLE
    chat.turns.append(Turn("user", "  What   is a   very long question about zebras and zoos?"))
    chat.name_from_first_message()
    assert chat.title == "What is a very long question about zebra…"
    chat.turns.append(Turn("user", "another"))
    chat.name_from_first_message()
    assert chat.title.startswith("What is")


def test_truncating_saved_turns_marks_the_chat_for_rewriting() -> None:
    chat = Conversation(turns=[Turn("user", "a"), Turn("assistant", "b")], synced=2)
    chat.truncate(2)
    assert not chat.rewrite
    chat.truncate(1)
    assert chat.rewrite and [t.content for t in chat.turns] == ["a"]
