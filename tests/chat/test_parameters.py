"""A chat's sampling parameters: checked, sent to the engine, saved with the chat."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from desktop.base.config import Paths
from desktop.base.errors import InvalidRequest
from desktop.chat import ChatCore, ChatSaver, Conversation
from desktop.chat._parameters import Sampling, valid
from desktop.store._chat_records import ChatMessage
from desktop.store._chats import ChatStore
from tests.chat.scripted import Scripted

if TYPE_CHECKING:
    from desktop.root.context import AppContext

pytestmark = pytest.mark.fast

CHOSEN = Sampling(
    temperature=0.2,
    max_tokens=77,
    top_p=0.5,
    top_k=7,
    min_p=0.1,
    repeat_penalty=1.3,
    seed=1234,
    context_length=8192,
)


def _store() -> ChatStore:
    return ChatStore(Paths.from_env().database)


def test_values_out_of_range_or_of_the_wrong_kind_are_left_out() -> None:
    bad = {
        "top_p": 1.5,
        "top_k": -1,
        "seed": "7",
        "max_tokens": 0,
        "min_p": float("nan"),
        "repeat_penalty": True,
        "temperature": 2.5,
        "unknown": 3,
        "context_length": 10,
    }
    assert Sampling.from_dict(bad) == Sampling()
    assert Sampling.from_dict(bad, CHOSEN) == CHOSEN
    assert Sampling.from_dict({"top_k": 5.0, "seed": None}, CHOSEN) == Sampling(
        0.2, 77, 0.5, 5, 0.1, 1.3, None, 8192
    )
    assert not valid("top_k", 2.5) and valid("max_tokens", 131_072)
    assert not valid("max_tokens", 131_073)


def test_the_chats_parameters_are_what_the_engine_is_asked_for() -> None:
    engine = Scripted("Fine.")
    core = ChatCore(engine, None)
    chat = Conversation(model="m")
    chat.sampling = CHOSEN
    core.run(core.ask(chat, "Hello"))
    [params] = engine.params
    assert (
        params.temperature,
        params.max_tokens,
        params.top_p,
        params.top_k,
        params.min_p,
        params.repeat_penalty,
        params.seed,
        params.context_length,
    ) == (0.2, 77, 0.5, 7, 0.1, 1.3, 1234, 8192)


def test_parameters_are_saved_with_the_chat_and_read_back_after_a_restart() -> None:
    store = _store()
    saver = ChatSaver(store)
    core = ChatCore(Scripted("Fine."), saver)
    chat = Conversation(model="m")
    core.run(core.ask(chat, "Hello"))
    chat.sampling = CHOSEN
    saver.set_parameters(chat)  # changed after the last answer: still kept
    store.close()

    again = ChatSaver(_store())
    [reopened] = again.load_all()
    assert reopened.sampling == CHOSEN
    again.load_turns(reopened)
    assert reopened.sampling == CHOSEN  # not the older answer's temperature


def test_a_chat_from_before_kept_parameters_takes_its_last_answers_temperature() -> None:
    store = _store()
    conv = store.create_conversation("old", "m")
    store.add_message(conv.id, ChatMessage("user", "hi"))
    store.add_message(conv.id, ChatMessage("assistant", "hello", parameters={"temperature": 0.3}))
    assert store.get_conversation(conv.id).parameters is None
    saver = ChatSaver(store)
    [chat] = saver.load_all()
    saver.load_turns(chat)
    assert chat.temperature == 0.3 and chat.top_k == 40


def test_parameters_travel_in_the_json_export_and_bad_ones_read_as_defaults() -> None:
    store = _store()
    saver = ChatSaver(store)
    chat = Conversation(model="m")
    chat.sampling = CHOSEN
    core = ChatCore(Scripted("Fine."), saver)
    core.run(core.ask(chat, "Hi"))
    exported = json.loads(store.export_json())
    # The chat's Tools switch travels beside the sampling (issue 50, item 6).
    assert exported["conversations"][0]["parameters"] == {**CHOSEN.to_dict(), "tools": True}

    exported["conversations"][0]["parameters"]["top_p"] = 9  # edited by hand
    store.import_json(json.dumps(exported))
    imported = [c for c in saver.load_all() if c.store_id != chat.store_id]
    assert imported[0].top_p == 0.95 and imported[0].top_k == 7

    exported["conversations"][0]["parameters"] = "hot"
    with pytest.raises(InvalidRequest, match="'parameters' must be an object or null"):
        store.import_json(json.dumps(exported))


def test_a_chats_context_length_is_what_the_model_is_loaded_with(
    tiny_chat, context: AppContext
) -> None:
    core = ChatCore(context.scheduler, None)
    chat = Conversation(model=str(tiny_chat), max_tokens=4)
    core.run(core.ask(chat, "Hello"))
    [fitted] = context.scheduler.loaded()
    assert fitted.report.context_length == 2048  # the tiny model's trained context
    chat.context_length = 512
    core.run(core.ask(chat, "Again"))
    [loaded] = context.scheduler.loaded()
    assert loaded.report.context_length == 512


def test_the_experts_place_takes_the_settings_words_or_a_layer_count_only() -> None:
    # engine.cpu_moe's values, per chat (issue 46): None (the setting), "all", "none", N.
    for good in (None, "all", "none", 0, 3, 10_000):
        assert Sampling.from_dict({"cpu_moe": good}).cpu_moe == good
    for bad in ("auto", "some", -1, 10_001, 1.5, True):
        assert Sampling.from_dict({"cpu_moe": bad}, Sampling(cpu_moe=2)).cpu_moe == 2
    assert Sampling(cpu_moe="all").generation_params().cpu_moe == "all"
