"""Each protocol's request becomes one typed ``ChatCall``: messages, sampling, typed tool
specs, template switches and whether a call is forced, built by a pure translator."""

from __future__ import annotations

import json
from typing import Any

from desktop.engine._types import ChatCall, Message, ToolSpec
from desktop.server import _request_parts as request_parts
from desktop.server._protocols.anthropic import requests as ar
from desktop.server._protocols.anthropic import translate as aw
from desktop.server._protocols.ollama import requests as orq
from desktop.server._protocols.ollama import translate as ow
from desktop.server._protocols.openai import schemas
from desktop.server._protocols.openai import translate as oq
from desktop.server._protocols.responses import requests as rr
from desktop.server._protocols.responses import translate as rw

LIMITS = request_parts.Limits(max_tokens=100, timeout_s=5.0)
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}
WEATHER = ToolSpec("get_weather", "Weather of a city", SCHEMA)
HI = [Message("user", "hi")]


def _forced_schema(call: ChatCall) -> dict[str, Any]:
    assert call.params.json_schema is not None
    schema: dict[str, Any] = json.loads(call.params.json_schema)
    return schema


def test_an_openai_chat_request_becomes_one_call() -> None:
    req = schemas.ChatCompletionRequest.model_validate(
        {
            "model": "m",
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [
                {
                    "type": "function",
                    "function": {
                        "name": "get_weather",
                        "description": "Weather of a city",
                        "parameters": SCHEMA,
                        "strict": True,
                    },
                }
            ],
            "max_tokens": 7,
            "reasoning_effort": "none",
        }
    )
    call = oq.chat_call(req, HI, LIMITS)
    assert call.messages == tuple(HI)
    assert call.tools == (ToolSpec("get_weather", "Weather of a city", SCHEMA, strict=True),)
    assert call.template_kwargs == {"enable_thinking": False}
    assert not call.forced and call.params.max_tokens == 7 and call.params.json_schema is None
    # The spec renders back as the request sent it (what the chat template reads).
    assert call.openai_tools() == [req.tools[0]]  # type: ignore[index]


def test_an_openai_named_tool_choice_forces_that_one_tool() -> None:
    other = {"type": "function", "function": {"name": "other"}}
    weather = {"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}}
    req = schemas.ChatCompletionRequest.model_validate(
        {
            "model": "m",
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [other, weather],
            "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
        }
    )
    call = oq.chat_call(req, HI, LIMITS)
    assert call.forced and [t.name for t in call.tools] == ["get_weather"]
    assert _forced_schema(call)["properties"]["name"] == {"const": "get_weather"}
    none = req.model_copy(update={"tool_choice": "none"})
    assert oq.chat_call(none, HI, LIMITS).tools == ()


def test_an_anthropic_message_becomes_one_call() -> None:
    req = ar.MessagesRequest.model_validate(
        {
            "model": "m",
            "max_tokens": 10,
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [
                {"name": "get_weather", "description": "Weather of a city", "input_schema": SCHEMA}
            ],
            "tool_choice": {"type": "any"},
            "thinking": {"type": "disabled"},
        }
    )
    call = aw.chat_call(req, HI, LIMITS)
    assert call.tools == (WEATHER,) and call.forced
    assert call.template_kwargs == {"enable_thinking": False}
    assert call.params.max_tokens == 10 and call.params.temperature == 1.0
    assert _forced_schema(call)["properties"]["arguments"] == SCHEMA
    counted = aw.count_call(req, HI)  # count_tokens renders the same prompt, samples nothing
    assert counted.tools == call.tools and counted.template_kwargs == call.template_kwargs
    auto = aw.chat_call(req.model_copy(update={"tool_choice": None}), HI, LIMITS)
    assert not auto.forced and auto.params.json_schema is None


def test_a_responses_request_becomes_one_call() -> None:
    req = rr.ResponsesRequest.model_validate(
        {
            "model": "m",
            "input": "hi",
            "tools": [
                {"type": "function", "name": "get_weather", "parameters": SCHEMA},
                {"type": "web_search"},  # hosted: left out of the call
            ],
            "tool_choice": "required",
            "reasoning": {"effort": "high"},
            "max_output_tokens": 9,
        }
    )
    call = rw.chat_call(req, HI, LIMITS)
    assert call.tools == (ToolSpec("get_weather", None, SCHEMA),) and call.forced
    assert call.template_kwargs == {"enable_thinking": True}
    assert call.params.max_tokens == 9
    assert _forced_schema(call)["properties"]["name"] == {"const": "get_weather"}


def test_an_ollama_chat_and_generate_become_calls() -> None:
    req = orq.ChatRequest.model_validate(
        {
            "model": "m",
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"type": "function", "function": {"name": "get_weather"}}],
            "think": False,
            "options": {"num_predict": 5, "temperature": 0},
        }
    )
    call = ow.chat_call(req, HI, LIMITS)
    # Ollama's function tools get the empty-object schema; Ollama forces no tool.
    assert call.tools == (ToolSpec("get_weather", None, {"type": "object", "properties": {}}),)
    assert not call.forced and call.template_kwargs == {"enable_thinking": False}
    assert call.params.max_tokens == 5 and call.params.temperature == 0.0
    generate = orq.GenerateRequest.model_validate({"model": "m", "prompt": "hi", "think": True})
    params = ow.generation_params(generate, LIMITS)
    made = ow.generate_call(generate, HI, params)
    assert made == ChatCall(tuple(HI), params, (), {"enable_thinking": True})
