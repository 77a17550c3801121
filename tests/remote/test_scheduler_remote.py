"""A remote model uses no memory here: it never pushes a local model out."""

from __future__ import annotations

from pathlib import Path

from desktop.base.config import NoPolicy
from desktop.engine._types import ChatCall, GenerationParams, Message, ToolCall, ToolSpec
from desktop.remote import keyring_set
from desktop.root.context import AppContext, build_context
from tests.remote.fake_openai import Fake

PARAMS = GenerationParams(max_tokens=4, temperature=0.0)


def test_a_local_model_stays_loaded_while_a_remote_model_is_used(
    fake: Fake, tiny_chat: Path
) -> None:
    ctx = build_context(policy=NoPolicy(), cli_settings={"engine.max_loaded_models": 1})
    try:
        ctx.remote_registry.add("gpu", fake.url)
        keyring_set("gpu", "sk-remote")
        ctx.resolver.register(tiny_chat)
        list(ctx.scheduler.stream_chat("tiny-chat", ChatCall.of([Message("user", "hi")], PARAMS)))
        answer = "".join(
            c.text
            for c in ctx.scheduler.stream_chat(
                "gpu/echo", ChatCall.of([Message("user", "from afar")], PARAMS)
            )
        )
        assert answer == "from afar "
        assert {m.model_id for m in ctx.scheduler.loaded()} == {"tiny-chat", "gpu/echo"}
        # Back to the local model: answered at once, without loading it again.
        again = list(
            ctx.scheduler.stream_chat("tiny-chat", ChatCall.of([Message("user", "hi")], PARAMS))
        )
        assert again[-1].timings is not None and again[-1].timings.load_s == 0
    finally:
        ctx.close()


def test_a_remote_tool_call_comes_out_of_the_engine_structured_never_as_text(
    fake: Fake,
    context: AppContext,
) -> None:
    """The remote's structured call passes through unchanged, on the final chunk: no
    chunk's text holds call markup for anything to parse again."""
    context.remote_registry.add("gpu", fake.url)
    keyring_set("gpu", "sk-remote")
    weather = {
        "type": "function",
        "function": {"name": "get_weather", "parameters": {"type": "object"}},
    }
    tools = [ToolSpec.from_openai(weather)]
    call = ChatCall.of([Message("user", "weather in Paris?")], PARAMS, tools=tools)
    chunks = list(context.scheduler.stream_chat("gpu/tooler", call))
    assert "".join(c.text for c in chunks) == ""
    assert chunks[-1].is_final and chunks[-1].finish_reason == "tool_calls"
    assert chunks[-1].tool_calls == (ToolCall("call_1", "get_weather", '{"city": "Paris"}'),)
    assert fake.bodies[-1]["tools"] == [weather]
