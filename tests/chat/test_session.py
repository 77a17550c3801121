"""One turn through the core with the real scheduler, tiny models and the chat store."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from desktop.base.errors import EdgeDeskError, InvalidRequest
from desktop.chat import ChatCore, ChatSaver, Conversation, Turn
from desktop.engine._types import ChatCall, Delta, Message
from desktop.remote import keyring_set
from desktop.root.context import AppContext
from tests.chat.scripted import Scripted
from tests.remote.conftest import MemoryKeyring, fake, memory_keyring  # noqa: F401
from tests.remote.fake_openai import FAILURE, Fake


def _core(context: AppContext) -> ChatCore:
    return ChatCore(
        context.scheduler,
        ChatSaver(context.chat_store),
        search=lambda q, cols: context.searcher.search(q, list(cols), k=5),
    )


def _chat(tiny_chat: Path, **kwargs: object) -> Conversation:
    return Conversation(model=str(tiny_chat), max_tokens=8, **kwargs)  # type: ignore[arg-type]


def _stored(context: AppContext) -> list[tuple[str, str]]:
    [conv] = context.chat_store.list_conversations()
    return [(m.role, m.content) for m in context.chat_store.get_messages(conv.id)]


def test_a_turn_streams_saves_and_titles_the_chat(context: AppContext, tiny_chat: Path) -> None:
    core = _core(context)
    chat = _chat(tiny_chat)
    seen: list[Delta] = []
    turn = core.run(core.ask(chat, "Hello there"), seen.append)
    assert turn.content and turn.content == "".join(c.text for c in seen)
    assert turn.usage is not None and 0 < turn.usage.completion_tokens <= 8
    # Where the model ran, for the answer's footer: this CPU build offloads nothing.
    assert turn.placement is not None and turn.placement.describe() == "CPU only"
    assert chat.title == "Hello there"
    assert _stored(context) == [("user", "Hello there"), ("assistant", turn.content)]


def test_regenerate_and_edit_replace_what_they_answer(context: AppContext, tiny_chat: Path) -> None:
    core = _core(context)
    chat = _chat(tiny_chat, temperature=1.0)
    core.run(core.ask(chat, "first"))
    again = core.run(core.regenerate(chat))
    assert [t.role for t in chat.turns] == ["user", "assistant"]
    assert _stored(context) == [("user", "first"), ("assistant", again.content)]

    core.run(core.ask(chat, "second"))
    edited = core.run(core.ask(chat, "second, edited", replace=2))
    assert [t.content for t in chat.turns][::2] == ["first", "second, edited"]
    assert _stored(context)[2:] == [("user", "second, edited"), ("assistant", edited.content)]


def test_bad_requests_are_refused_before_anything_changes(
    context: AppContext, tiny_chat: Path
) -> None:
    core = _core(context)
    chat = _chat(tiny_chat)
    with pytest.raises(InvalidRequest, match="no question"):
        core.regenerate(chat)
    with pytest.raises(InvalidRequest, match="empty"):
        core.ask(chat, "   ")
    with pytest.raises(InvalidRequest, match="choose a model"):
        core.ask(Conversation(), "hi")
    assert chat.turns == []


def test_a_grounded_answer_is_given_numbered_sources_and_cites_the_file(
    context: AppContext, tiny_chat: Path, handbook: Path
) -> None:
    sent: list[list[Message]] = []

    class Recording:
        """The real scheduler, remembering the prompt it was sent."""

        def stream_chat(
            self, model: str, call: ChatCall, cancel: threading.Event | None = None
        ) -> Any:
            sent.append(list(call.messages))
            return context.scheduler.stream_chat(model, call, cancel)

    core = ChatCore(
        Recording(),
        ChatSaver(context.chat_store),
        search=lambda q, cols: context.searcher.search(q, list(cols), k=5),
    )
    chat = _chat(tiny_chat, collection="handbook", system_prompt="Be brief.")
    turn = core.run(core.ask(chat, "How many days of leave?"))
    system = sent[0][0].content
    assert system.startswith("Be brief.") and "[1] leave.md, lines 1-3" in system
    assert [c.location for c in turn.citations] == [f"{handbook} lines 1-3"]
    [conv] = context.chat_store.list_conversations()
    assert conv.collection == "handbook"
    answer = context.chat_store.get_messages(conv.id)[1]
    assert [s.path for s in answer.sources] == [str(handbook)]


def _stopped_after_first_word(context: AppContext, tiny_chat: Path) -> Turn:
    """An answer of up to 1900 tokens, stopped once its first words have come."""
    core = _core(context)
    chat = _chat(tiny_chat)
    chat.max_tokens = 1900
    cancel = threading.Event()

    def stop_after_first(chunk: Delta) -> None:
        if chunk.text:
            cancel.set()

    return core.run(core.ask(chat, "go on"), stop_after_first, cancel)


def test_a_stopped_answer_keeps_what_it_had_and_is_saved(
    context: AppContext, tiny_chat: Path
) -> None:
    turn = _stopped_after_first_word(context, tiny_chat)
    assert turn.finish_reason == "cancelled" and turn.content
    assert turn.usage is not None and turn.usage.completion_tokens < 1900
    assert _stored(context)[1] == ("assistant", turn.content)


def test_an_ephemeral_chat_never_reaches_the_disk(context: AppContext, tiny_chat: Path) -> None:
    core = _core(context)
    chat = _chat(tiny_chat, ephemeral=True)
    core.run(core.ask(chat, "secret pineapple"))
    assert chat.store_id is not None and chat.store_id < 0  # the store's in-memory part
    context.close()
    assert b"pineapple" not in context.paths.database.read_bytes()


def test_a_stopped_answer_reads_back_as_stopped(context: AppContext, tiny_chat: Path) -> None:
    _stopped_after_first_word(context, tiny_chat)
    [reopened] = ChatSaver(context.chat_store).load_all()
    ChatSaver(context.chat_store).load_turns(reopened)
    assert reopened.turns[1].finish_reason == "cancelled"
    assert "*(stopped)*" in context.chat_store.export_markdown()


def test_an_answer_that_breaks_off_is_saved_with_its_words_and_why(
    context: AppContext,
    fake: Fake,  # noqa: F811
    memory_keyring: MemoryKeyring,  # noqa: F811
) -> None:
    context.remote_registry.add("gpu", fake.url)
    keyring_set("gpu", "sk-remote")
    core = _core(context)
    chat = Conversation(model="gpu/fails", max_tokens=8)
    with pytest.raises(EdgeDeskError) as failed:
        core.run(core.ask(chat, "hi"))
    assert FAILURE in failed.value.message
    turn = chat.turns[-1]
    assert (turn.content, turn.finish_reason) == ("hi again ", "error")
    assert turn.error == failed.value.message

    [reopened] = ChatSaver(context.chat_store).load_all()
    ChatSaver(context.chat_store).load_turns(reopened)
    again = reopened.turns[-1]
    assert (again.role, again.content, again.finish_reason, again.error) == (
        "assistant",
        "hi again ",
        "error",
        failed.value.message,
    )
    assert f"*(broken off: {failed.value.message})*" in context.chat_store.export_markdown()


def test_an_error_before_any_word_leaves_the_question_unanswered_and_sent_again_once(
    context: AppContext,
    fake: Fake,  # noqa: F811
    memory_keyring: MemoryKeyring,  # noqa: F811
) -> None:
    context.remote_registry.add("gpu", fake.url)
    keyring_set("gpu", "wrong key")  # refused with 401 before anything streams
    core = _core(context)
    chat = Conversation(model="gpu/echo", max_tokens=8)
    with pytest.raises(EdgeDeskError):
        core.run(core.ask(chat, "hi"))
    assert [t.role for t in chat.turns] == ["user"]
    assert _stored(context) == [("user", "hi")]

    # Sent again as it was (the remote's key now matches): answered, not asked twice.
    fake.key = "wrong key"
    answer = core.run(core.ask(chat, "hi"))
    assert answer.content
    expected = [("user", "hi"), ("assistant", answer.content)]
    assert [(t.role, t.content) for t in chat.turns] == expected
    assert _stored(context) == expected
    # Another question after an answered one is a new turn, even with the same words.
    core.run(core.ask(chat, "hi"))
    assert [t.role for t in chat.turns] == ["user", "assistant", "user", "assistant"]


def test_drive_reports_through_callbacks_and_leaves_the_turn_to_its_view(
    context: AppContext,
) -> None:
    core = ChatCore(Scripted("Paris is the capital."), ChatSaver(context.chat_store))
    chat = Conversation(model="any")
    pending = core.ask(chat, "Capital of France?")
    seen: list[str] = []
    sources: list[list[Any]] = []
    final = core.drive(pending, lambda c: seen.append(c.text), on_sources=sources.append)
    assert "".join(seen) == "Paris is the capital."
    assert final.finish_reason == "stop" and sources == [[]]
    assert pending.answer.content == ""  # the window's thread fills its Turn from signals
    assert _stored(context) == [
        ("user", "Capital of France?"),
        ("assistant", "Paris is the capital."),
    ]


def test_a_stop_while_waiting_for_the_model_ends_the_answer_before_it_began(
    context: AppContext,
) -> None:
    waiting = threading.Event()
    core = ChatCore(Scripted("never", wait=waiting), ChatSaver(context.chat_store))
    chat = Conversation(model="any")
    cancel = threading.Event()
    pending = core.ask(chat, "hi")
    stopper = threading.Thread(target=lambda: (waiting.wait(10), cancel.set()))
    stopper.start()
    turn = core.run(pending, cancel=cancel)
    stopper.join()
    assert (turn.content, turn.finish_reason) == ("", "cancelled")
    assert _stored(context) == [("user", "hi"), ("assistant", "")]
