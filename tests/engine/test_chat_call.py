"""A chat call is plain frozen data: it crosses a pipe to a worker process whole, and its
typed tool specs render as the OpenAI tools a chat template reads."""

from __future__ import annotations

import msgspec

from desktop.engine._types import (
    ChatCall,
    Delta,
    GenerationParams,
    Image,
    Message,
    ToolCall,
    ToolSpec,
    Usage,
)

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}
WEATHER = ToolSpec("get_weather", "Weather of a city", SCHEMA)


def test_a_call_and_its_chunks_cross_a_pipe_unchanged() -> None:
    """msgpack out and back (as a worker process would get them): nothing is lost."""
    call = ChatCall(
        (
            Message("system", "be brief"),
            Message("user", "this?", images=(Image(b"\x89PNG", "image/png", "ab"),)),
            Message("assistant", "", tool_calls=(ToolCall("c1", "get_weather", "{}"),)),
            Message("tool", "sunny", tool_call_id="c1"),
        ),
        GenerationParams(max_tokens=3, stop=("\n",), json_schema="{}"),
        (WEATHER,),
        {"enable_thinking": False},
        forced=True,
    )
    again = msgspec.msgpack.decode(msgspec.msgpack.encode(call), type=ChatCall)
    assert again == call
    final = Delta(finish_reason="stop", usage=Usage(3, 1), tool_calls=(ToolCall("c", "f", "{}"),))
    assert msgspec.msgpack.decode(msgspec.msgpack.encode(final), type=Delta) == final


def test_tool_specs_render_as_the_openai_tools_they_came_from() -> None:
    given = [
        {"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}},
        {"type": "function", "function": {"name": "now", "description": "", "strict": True}},
    ]
    call = ChatCall.of([Message("user", "hi")], tools=[ToolSpec.from_openai(t) for t in given])
    assert call.tools == (ToolSpec("get_weather", None, SCHEMA), ToolSpec("now", "", None, True))
    assert call.openai_tools() == given
    assert call.tool_schemas() == {"get_weather": SCHEMA, "now": None}
    assert ChatCall.of([Message("user", "hi")]).openai_tools() is None


def test_a_call_is_forced_only_when_it_offers_a_tool() -> None:
    assert not ChatCall.of([Message("user", "hi")], forced=True).forced
