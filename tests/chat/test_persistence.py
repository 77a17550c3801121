"""The saver mirrors conversations into the real chat store (SQLite on disk)."""

from __future__ import annotations

from desktop.base.config import Paths
from desktop.chat import ChatSaver, Conversation, Turn
from desktop.engine._types import Delta, Placement, Usage
from desktop.retrieval._search import Hit
from desktop.store._chat_records import ChatMessage
from desktop.store._chats import ChatStore

HIT = Hit(1, "docs", "/docs/report.pdf", 2, 3, 9, "Walruses eat clams.", 1.0)


def _answered(saver: ChatSaver, chat: Conversation, question: str, answer: str) -> None:
    chat.turns.append(Turn("user", question))
    saver.sync(chat, len(chat.turns))
    final = Delta(finish_reason="stop", usage=Usage(5, 3))
    saver.save_answer(chat, final, answer, "thought", [HIT])
    chat.turns.append(Turn("assistant", answer, "thought", sources=[HIT]))


def test_a_saved_chat_reads_back_with_settings_reasoning_and_citations() -> None:
    store = ChatStore(Paths.from_env().database)
    saver = ChatSaver(store)
    chat = Conversation(model="m", system_prompt="Be brief.", temperature=0.3, collection="docs")
    _answered(saver, chat, "What do walruses eat?", "Clams [1].")
    store.close()

    again = ChatSaver(ChatStore(Paths.from_env().database))
    [stored] = again.load_all()
    assert (stored.title, stored.model, stored.collection) == ("New chat", "m", "docs")
    again.load_turns(stored)
    assert [(t.role, t.content) for t in stored.turns] == [
        ("user", "What do walruses eat?"),
        ("assistant", "Clams [1]."),
    ]
    answer = stored.turns[1]
    assert answer.reasoning == "thought" and answer.usage == Usage(5, 3)
    assert [c.location for c in answer.citations] == ["/docs/report.pdf p. 2, lines 3-9"]
    assert (stored.system_prompt, stored.temperature) == ("Be brief.", 0.3)


def test_an_edited_history_replaces_the_stored_one() -> None:
    store = ChatStore(Paths.from_env().database)
    saver = ChatSaver(store)
    chat = Conversation(model="m")
    _answered(saver, chat, "first", "one")
    chat.truncate(0)
    _answered(saver, chat, "edited", "two")
    [conv] = store.list_conversations()
    assert [m.content for m in store.get_messages(conv.id)] == ["edited", "two"]


def test_keeping_an_ephemeral_chat_writes_it_to_disk() -> None:
    store = ChatStore(Paths.from_env().database)
    saver = ChatSaver(store)
    chat = Conversation(model="m", ephemeral=True)
    _answered(saver, chat, "secret?", "kept [1].")
    assert [c.ephemeral for c in store.list_conversations()] == [True]

    saver.keep(chat)
    assert not chat.ephemeral and chat.store_id is not None and chat.store_id > 0
    [conv] = store.list_conversations()
    assert not conv.ephemeral
    messages = store.get_messages(conv.id)
    assert [m.content for m in messages] == ["secret?", "kept [1]."]
    assert messages[1].sources[0].cited


def test_the_think_switch_is_saved_with_the_chat_and_read_back() -> None:
    store = ChatStore(Paths.from_env().database)
    saver = ChatSaver(store)
    quiet = Conversation(model="m", think=False)
    _answered(saver, quiet, "answer at once", "ok")
    thinking = Conversation(model="m")
    _answered(saver, thinking, "take your time", "ok")
    thinking.think = False
    saver.set_think(thinking)  # flipped after the chat was saved
    store.close()

    again = ChatSaver(ChatStore(Paths.from_env().database))
    assert [c.think for c in again.load_all()] == [False, False]


def test_where_an_answer_ran_is_saved_with_it_and_a_damaged_record_reads_as_none() -> None:
    store = ChatStore(Paths.from_env().database)
    saver = ChatSaver(store)
    chat = Conversation(model="m")
    chat.turns.append(Turn("user", "hi"))
    saver.sync(chat, 1)
    placed = Placement(49, 40, ("CUDA0 (RTX 4070)",), experts_in_ram=12)
    saver.save_answer(
        chat, Delta(finish_reason="stop", usage=Usage(5, 3), placement=placed), "yo", ""
    )
    chat.turns.append(Turn("assistant", "yo"))
    saver.save_answer(chat, Delta(finish_reason="stop", usage=Usage(5, 3)), "remote", "")
    [conv] = store.list_conversations()
    # An imported export is untrusted JSON: a bad placement reads as none, never a crash.
    damaged: list[object] = [
        {"layers_total": "x"},
        {"layers_total": -5},
        {"layers_total": 3, "devices": ["GPU"] * 100_000},  # a megabyte line under it
        "CPU only",
    ]
    for value in damaged:
        store.add_message(conv.id, ChatMessage("assistant", "old", timings={"placement": value}))
    store.close()

    again = ChatSaver(ChatStore(Paths.from_env().database))
    [stored] = again.load_all()
    again.load_turns(stored)
    assert [t.placement for t in stored.turns[1:]] == [placed, None] + [None] * len(damaged)
