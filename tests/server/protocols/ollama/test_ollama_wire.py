"""Ollama's API translation, without a server: options, keep_alive, messages, listings."""

from __future__ import annotations

import json
from typing import Any

import pytest

from desktop.base.errors import InvalidRequest
from desktop.engine._types import Delta, Timings, Usage
from desktop.server import _request_parts as request_parts
from desktop.server._protocols.ollama import replies as oreplies
from desktop.server._protocols.ollama import requests as orq
from desktop.server._protocols.ollama import translate as ow
from tests.server import bodies

pytestmark = pytest.mark.fast

LIMITS = request_parts.Limits(max_tokens=100, timeout_s=5)


def _chat(**fields: Any) -> orq.ChatRequest:
    return orq.ChatRequest.model_validate({"model": "m", **fields})


def test_options_map_onto_sampling_with_ollamas_defaults() -> None:
    plain = ow.generation_params(_chat(), LIMITS)
    assert (plain.temperature, plain.top_p, plain.top_k, plain.max_tokens) == (0.8, 0.9, 40, 100)
    params = ow.generation_params(
        _chat(
            options={
                "num_predict": 7,
                "temperature": 0,
                "top_p": 0.5,
                "top_k": 3,
                "seed": 42,
                "stop": ["\n\n"],
                "repeat_penalty": 1.1,
                "num_ctx": 8192,
                "mirostat": 0,
            }
        ),
        LIMITS,
    )
    assert (
        params.max_tokens,
        params.temperature,
        params.top_p,
        params.top_k,
        params.seed,
        params.stop,
        params.repeat_penalty,
    ) == (7, 0.0, 0.5, 3, 42, ("\n\n",), 1.1)
    assert ow.generation_params(_chat(options={"num_predict": -1}), LIMITS).max_tokens == 100
    # Above the server's limit: lowered to it, not refused.
    assert ow.generation_params(_chat(options={"num_predict": 1000}), LIMITS).max_tokens == 100
    assert json.loads(ow.generation_params(_chat(format="json"), LIMITS).json_schema or "") == {
        "type": "object"
    }


@pytest.mark.parametrize(
    ("fields", "param"),
    [
        ({"options": {"mirostat": 2}}, "options.mirostat"),
        ({"options": {"made_up": 1}}, "options.made_up"),
        ({"options": {"top_k": "many"}}, "options.top_k"),
        ({"format": "yaml"}, "format"),
    ],
)
def test_options_we_cannot_honour_are_refused_by_name(fields: dict[str, Any], param: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        ow.generation_params(_chat(**fields), LIMITS)
    assert caught.value.param == param


def test_keep_alive_durations() -> None:
    assert [ow.keep_alive_s(v) for v in (None, 0, "0", "5m", "1h", "30s", -1, "1.5h")] == [
        None,
        0.0,
        0.0,
        300.0,
        3600.0,
        30.0,
        -1.0,
        5400.0,
    ]
    with pytest.raises(InvalidRequest) as caught:
        ow.keep_alive_s("soon")
    assert caught.value.param == "keep_alive"


def test_messages_tool_calls_and_results_are_paired() -> None:
    messages = bodies.ollama_messages(
        [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather and time?"},
            {
                "role": "assistant",
                "content": "",
                "thinking": "two tools",
                "tool_calls": [
                    {"function": {"name": "get_weather", "arguments": {"city": "Oslo"}}},
                    {"function": {"name": "get_time", "arguments": {}}},
                ],
            },
            {"role": "tool", "tool_name": "get_time", "content": "noon"},
            {"role": "tool", "content": "rain"},
        ]
    )
    assistant = messages[2]
    assert assistant.reasoning == "two tools"
    assert [json.loads(c.arguments) for c in assistant.tool_calls] == [{"city": "Oslo"}, {}]
    assert [(m.role, m.name, m.tool_call_id) for m in messages[3:]] == [
        ("tool", "get_time", assistant.tool_calls[1].id),
        ("tool", "get_weather", assistant.tool_calls[0].id),
    ]
    with pytest.raises(InvalidRequest) as caught:
        bodies.ollama_messages([{"role": "user", "content": "x", "images": ["aGk="]}])  # "hi"
    assert caught.value.param == "messages.0.images.0"
    assert "not a picture" in caught.value.message


def test_generate_refusals_and_model_names() -> None:
    for fields, param in (
        ({"template": "{{ .Prompt }}"}, "template"),
        ({"context": [1, 2]}, "context"),
        ({"images": ["x"], "raw": True}, "images"),
        ({"images": ["x"], "suffix": "}"}, "images"),
    ):
        with pytest.raises(InvalidRequest) as caught:
            ow.refuse_generate(orq.GenerateRequest.model_validate({"model": "m", **fields}))
        assert caught.value.param == param
    # The zero value of a Go client's Suffix is no suffix, as in Ollama: a templated
    # completion that may carry pictures, not fill-in-the-middle.
    empty = orq.GenerateRequest.model_validate(
        {"model": "m", "prompt": "Describe", "suffix": "", "images": ["x"]}
    )
    assert empty.suffix is None
    ow.refuse_generate(empty)
    assert ow.model_name("tiny:latest") == "tiny"
    assert ow.model_name("org/repo:file.gguf") == "org/repo:file.gguf"


def test_final_line_counts_and_nanosecond_durations() -> None:
    final = Delta(
        finish_reason="length",
        usage=Usage(12, 5),
        timings=Timings(load_s=0.5, prompt_s=0.25, generation_s=1.0),
    )
    assert oreplies.done_reason(final) == "length"
    assert oreplies.stats(final) == {
        "total_duration": 1_750_000_000,
        "load_duration": 500_000_000,
        "prompt_eval_count": 12,
        "prompt_eval_duration": 250_000_000,
        "eval_count": 5,
        "eval_duration": 1_000_000_000,
    }
    assert oreplies.line({"a": "é"}) == '{"a": "é"}\n'.encode()


def test_listing_and_show_from_header_facts() -> None:
    facts = {
        "kind": "chat",
        "architecture": "llama",
        "parameters": 270_000_000,
        "file_bytes": 1234,
        "context_length": 2048,
        "embedding_length": 64,
        "block_count": 2,
        "file_type": "Q4_K_M",
        "chat_template": "{{ x }}",
        "reasoning": False,
        "modified": 0.0,
    }
    listed = oreplies.describe("tiny", facts)
    assert (
        listed["name"],
        listed["size"],
        listed["details"]["parameter_size"],
        listed["details"]["quantization_level"],
    ) == ("tiny", 1234, "270M", "Q4_K_M")
    shown = oreplies.show("tiny", facts)
    assert shown["capabilities"] == ["completion", "tools"]
    assert shown["model_info"]["llama.context_length"] == 2048
    assert oreplies.show("e", {**facts, "kind": "embedding"})["capabilities"] == ["embedding"]


def test_think_is_the_thinking_switch() -> None:
    assert ow.template_kwargs(None) is None
    assert ow.template_kwargs(True) == {"enable_thinking": True}
    assert ow.template_kwargs(False) == {"enable_thinking": False}
    assert ow.template_kwargs("high") == {"enable_thinking": True}
