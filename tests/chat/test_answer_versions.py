"""Regenerate keeps the earlier answer as a version: flip back, saved, used, exported."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

import pytest

from desktop.base.config import Paths
from desktop.base.errors import EdgeDeskError
from desktop.chat import ChatCore, ChatSaver, Conversation
from desktop.chat import _attachments as attachments
from desktop.engine._types import ChatCall, Delta
from desktop.store._chats import ChatStore
from tests.chat.scripted import Scripted


class FailsFirst(Scripted):
    """Scripted, but the request numbered ``fail`` breaks before its first word."""

    def __init__(self, *answers: str, fail: int) -> None:
        super().__init__(*answers)
        self.fail = fail

    def stream_chat(
        self, model: str, call: ChatCall, cancel: threading.Event | None = None
    ) -> Iterator[Delta]:
        """Fail request ``fail`` at once; stream the others."""
        stream = super().stream_chat(model, call, cancel)
        if len(self.prompts) == self.fail:
            raise EdgeDeskError("the model went away")
        return stream


def _store() -> ChatStore:
    return ChatStore(Paths.from_env().database)


def test_regenerate_keeps_the_earlier_answer_as_a_version_to_flip_back_to() -> None:
    engine = Scripted("Answer one.", "Answer two.", "Answer three.", "Next answer.")
    core = ChatCore(engine, ChatSaver(_store()))
    chat = Conversation(model="m")
    core.run(core.ask(chat, "Question?"))
    core.run(core.regenerate(chat))
    third = core.run(core.regenerate(chat))
    assert third is chat.turns[-1] and third.content == "Answer three."
    assert (third.version, third.version_count) == (2, 3)
    assert [v.content for v in third.all_versions()] == [
        "Answer one.",
        "Answer two.",
        "Answer three.",
    ]

    first = chat.choose_version(1, 0)
    assert chat.turns[1] is first and first.content == "Answer one."
    assert (first.version, first.version_count) == (0, 3)
    # The chosen version is the history the next question is asked with.
    core.run(core.ask(chat, "And then?"))
    assert [m.content for m in engine.prompts[-1]] == ["Question?", "Answer one.", "And then?"]


def test_the_chosen_version_is_saved_survives_a_restart_and_is_exported() -> None:
    store = _store()
    saver = ChatSaver(store)
    core = ChatCore(Scripted("Old answer.", "New answer."), saver)
    chat = Conversation(model="m")
    core.run(core.ask(chat, "Question?"))
    core.run(core.regenerate(chat))
    chat.choose_version(1, 0)
    saver.choose_version(chat, 1)
    store.close()

    store = _store()
    again = ChatSaver(store)
    [reopened] = again.load_all()
    again.load_turns(reopened)
    answer = reopened.turns[1]
    assert answer.content == "Old answer."
    assert (answer.version, [v.content for v in answer.all_versions()]) == (
        0,
        ["Old answer.", "New answer."],
    )
    assert [m.content for m in reopened.messages()] == ["Question?", "Old answer."]

    [conv] = store.list_conversations()
    markdown = store.export_markdown([conv.id])
    assert "Old answer." in markdown and "New answer." not in markdown
    assert "*(answer version 1 of 2)*" in markdown
    exported = json.loads(store.export_json([conv.id]))
    saved = exported["conversations"][0]["messages"][1]
    assert saved["content"] == "Old answer." and saved["version"] == 0
    assert [v["content"] for v in saved["versions"]] == ["New answer."]
    # The search finds the words shown, not the version flipped away from.
    assert [h.snippet for h in store.search("Old")] == ["Old answer."]
    assert store.search("New") == []

    # The JSON export imports back with its versions.
    [copy] = store.import_json(store.export_json([conv.id]))
    [_, imported] = store.get_messages(copy.id)
    assert imported.content == "Old answer." and imported.version == 0
    assert [v["content"] for v in imported.versions] == ["New answer."]


def test_a_regenerate_that_fails_before_its_first_word_shows_the_old_answer_again() -> None:
    store = _store()
    core = ChatCore(FailsFirst("Kept answer.", "never", fail=2), ChatSaver(store))
    chat = Conversation(model="m")
    core.run(core.ask(chat, "Question?"))
    with pytest.raises(EdgeDeskError, match="went away"):
        core.run(core.regenerate(chat))
    assert [(t.role, t.content, t.version_count) for t in chat.turns] == [
        ("user", "Question?", 1),
        ("assistant", "Kept answer.", 1),
    ]
    [conv] = store.list_conversations()
    assert [m.content for m in store.get_messages(conv.id)] == ["Question?", "Kept answer."]


def test_a_failed_regenerate_puts_back_the_version_that_was_shown_not_the_newest() -> None:
    store = _store()
    core = ChatCore(FailsFirst("One.", "Two.", "never", fail=3), ChatSaver(store))
    chat = Conversation(model="m")
    core.run(core.ask(chat, "Question?"))
    core.run(core.regenerate(chat))
    chat.choose_version(1, 0)  # back to "One." before asking again
    with pytest.raises(EdgeDeskError):
        core.run(core.regenerate(chat))
    answer = chat.turns[1]
    assert (answer.content, answer.version) == ("One.", 0)
    assert [v.content for v in answer.all_versions()] == ["One.", "Two."]
    [conv] = store.list_conversations()
    saved = store.get_messages(conv.id)[1]
    assert (saved.content, saved.version) == ("One.", 0)


def test_an_answer_stopped_before_its_first_word_is_not_kept_as_a_version() -> None:
    core = ChatCore(Scripted("One.", "", "Three."), ChatSaver(_store()))
    chat = Conversation(model="m")
    core.run(core.ask(chat, "Question?"))
    core.run(core.regenerate(chat))  # an empty answer, as when stopped at once
    last = core.run(core.regenerate(chat))
    assert [v.content for v in last.all_versions()] == ["One.", "Three."]


def test_a_damaged_export_version_is_refused_by_name() -> None:
    store = _store()
    bad = {
        "edgedesk_export": 1,
        "conversations": [
            {
                "title": "t",
                "messages": [
                    {
                        "role": "assistant",
                        "content": "a",
                        "versions": [{"role": "assistant", "content": 5}],
                    }
                ],
            }
        ],
    }
    with pytest.raises(EdgeDeskError, match="version 1: 'content' must be text"):
        store.import_json(json.dumps(bad))
    assert store.list_conversations() == []


def _kept(store: ChatStore, chat: Conversation) -> list[tuple[str, str, int]]:
    assert chat.store_id is not None
    return [(m.role, m.content, len(m.versions)) for m in store.get_messages(chat.store_id)]


def test_a_refused_regenerate_keeps_the_answer_and_its_versions(
    edgedesk_home: object,
) -> None:
    from desktop.base.errors import InvalidRequest
    from desktop.chat._session import CannotSee
    from tests.fixtures.pictures import png

    store = _store()
    core = ChatCore(
        Scripted("one", "two", "three"), ChatSaver(store), sees=lambda model: model == "vision"
    )
    chat = Conversation(model="vision")
    picture = attachments.from_bytes("p.png", png())
    core.run(core.ask(chat, "What is this?", attachments=[picture]))
    core.run(core.regenerate(chat))
    chat.model = "text-only"  # cannot see the question's picture
    with pytest.raises(CannotSee):
        core.regenerate(chat)
    chat.model = ""
    with pytest.raises(InvalidRequest, match="choose a model"):
        core.regenerate(chat)
    assert [(t.content, t.version_count) for t in chat.turns[1:]] == [("two", 2)]
    chat.model = "vision"
    core.run(core.ask(chat, "And now?"))
    assert _kept(store, chat) == [
        ("user", "What is this?", 0),
        ("assistant", "two", 1),
        ("user", "And now?", 0),
        ("assistant", "three", 0),
    ]


def test_a_regenerate_whose_retrieval_fails_keeps_the_stored_answer(
    edgedesk_home: object,
) -> None:
    from desktop.chat import EmbeddingModelMissing

    store = _store()
    missing: list[str | None] = [None]
    core = ChatCore(
        Scripted("one", "two", "three"),
        ChatSaver(store),
        search=lambda _q, _c: [],
        missing=lambda _c: missing[0],
    )
    chat = Conversation(model="m", collection="docs")
    core.run(core.ask(chat, "q"))
    core.run(core.regenerate(chat))
    missing[0] = "bge-small-en-v1.5"  # its embedding model was deleted meanwhile
    with pytest.raises(EmbeddingModelMissing):
        core.run(core.regenerate(chat))
    assert _kept(store, chat) == [("user", "q", 0), ("assistant", "two", 1)]


def test_each_version_keeps_the_model_and_settings_that_made_it(
    edgedesk_home: object,
) -> None:
    store = _store()
    saver = ChatSaver(store)
    core = ChatCore(Scripted("cool", "hot"), saver)
    chat = Conversation(model="glm-small")
    chat.temperature = 0.2
    core.run(core.ask(chat, "Say something."))
    chat.model, chat.temperature = "glm-large", 1.5  # then regenerate with others
    core.run(core.regenerate(chat))
    assert chat.store_id is not None
    [_question, answer] = store.get_messages(chat.store_id)
    assert (answer.model, answer.parameters["temperature"]) == ("glm-large", 1.5)
    [earlier] = answer.versions
    assert (earlier["model"], earlier["parameters"]["temperature"]) == ("glm-small", 0.2)
    # Choosing the first version again stores it with its own, not the chat's.
    chat.choose_version(1, 0)
    saver.choose_version(chat, 1)
    [_question, chosen] = store.get_messages(chat.store_id)
    assert (chosen.content, chosen.model, chosen.parameters["temperature"]) == (
        "cool",
        "glm-small",
        0.2,
    )
