"""The pure translation layer and the tool-call parser, without a server or a model."""

from __future__ import annotations

import base64
import json
import struct

import pytest

from desktop.base.errors import InvalidRequest
from desktop.engine._prompting.toolcalls import StreamGate, parse_tool_calls
from desktop.engine._types import ChatCall, Delta, TokenLogprob, ToolCall, ToolSpec, Usage
from desktop.server import _request_parts as request_parts
from desktop.server._answer import finish_reason
from desktop.server._protocols.openai import events as oa
from desktop.server._protocols.openai import schemas as s
from desktop.server._protocols.openai import translate as oq

pytestmark = pytest.mark.fast

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


def _ids():
    counter = iter(range(100))
    return lambda: f"call_{next(counter)}"


def _chat(**fields) -> s.ChatCompletionRequest:
    return s.ChatCompletionRequest.model_validate(
        {"model": "m", "messages": [{"role": "user", "content": "hi"}], **fields}
    )


# ---------------------------------------------------------------- tool-call parser


def test_hermes_json_in_tool_call_tags() -> None:
    text = (
        'Let me look.<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
    )
    parsed = parse_tool_calls(text, {"get_weather"}, _ids())
    assert parsed.content == "Let me look."
    assert [(c.id, c.name, json.loads(c.arguments)) for c in parsed.tool_calls] == [
        ("call_0", "get_weather", {"city": "Paris"})
    ]


def test_several_calls_and_string_arguments() -> None:
    text = (
        '<tool_call>{"name": "a", "arguments": "{\\"x\\": 1}"}</tool_call>\n'
        '<tool_call>{"name": "b", "arguments": {}}</tool_call>'
    )
    parsed = parse_tool_calls(text, {"a", "b"}, _ids())
    assert [(c.name, json.loads(c.arguments)) for c in parsed.tool_calls] == [
        ("a", {"x": 1}),
        ("b", {}),
    ]
    assert parsed.content == ""


def test_glm45_arg_key_value_format() -> None:
    text = (
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>北京</arg_value>\n"
        "<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>"
    )
    call = parse_tool_calls(text, {"get_weather"}).tool_calls[0]
    assert call.name == "get_weather"
    assert json.loads(call.arguments) == {"city": "北京", "days": 3}


def test_glm4_name_line_then_json() -> None:
    parsed = parse_tool_calls('get_weather\n{"city": "Beijing"}', {"get_weather"})
    assert [(c.name, json.loads(c.arguments)) for c in parsed.tool_calls] == [
        ("get_weather", {"city": "Beijing"})
    ]
    # The same shape naming a tool we did not offer is just text.
    assert parse_tool_calls('weather\n{"city": "x"}', {"get_weather"}).tool_calls == ()


def test_kimi_k2_sections() -> None:
    text = (
        "ok <|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
        '<|tool_call_argument_begin|>{"city": "Shanghai"}<|tool_call_end|>'
        "<|tool_calls_section_end|>"
    )
    parsed = parse_tool_calls(text, {"get_weather"})
    assert parsed.content == "ok"
    assert json.loads(parsed.tool_calls[0].arguments) == {"city": "Shanghai"}


def test_bare_json_call_only_for_known_tools() -> None:
    text = '{"name": "get_weather", "arguments": {"city": "Rome"}}'
    assert parse_tool_calls(text, {"get_weather"}).tool_calls[0].name == "get_weather"
    assert parse_tool_calls(text, {"other"}).tool_calls == ()
    assert parse_tool_calls(text, {"other"}).content == text


@pytest.mark.parametrize(
    "text",
    [
        "plain answer",
        "<tool_call>{not json}</tool_call>",
        '<tool_call>{"name": 3}</tool_call>',
        '<tool_call>{"name": "get_weather", "arguments": [1]}</tool_call>',
    ],
)
def test_malformed_or_absent_calls_leave_the_text_alone(text: str) -> None:
    parsed = parse_tool_calls(text, {"get_weather"})
    assert parsed.tool_calls == () and parsed.content == text


# ---------------------------------------------------------------- requests → engine


def test_messages_translate_roles_parts_and_tool_turns() -> None:
    req = _chat(
        messages=[
            {"role": "developer", "content": "be brief"},
            {
                "role": "user",
                "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
            },
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "42"},
        ]
    )
    msgs = oq.to_messages(req.messages)
    assert [m.role for m in msgs] == ["system", "user", "assistant", "tool"]
    assert msgs[1].content == "ab"
    assert msgs[2].tool_calls[0].name == "f" and msgs[3].tool_call_id == "c1"


def test_image_parts_and_bad_tool_arguments_are_refused() -> None:
    with pytest.raises(InvalidRequest, match="image URL must be a non-empty string"):
        oq.to_messages(
            _chat(messages=[{"role": "user", "content": [{"type": "image_url"}]}]).messages
        )
    with pytest.raises(InvalidRequest, match="JSON object"):
        oq.to_messages(
            _chat(
                messages=[
                    {
                        "role": "assistant",
                        "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "[1]"}}],
                    }
                ]
            ).messages
        )
    with pytest.raises(InvalidRequest, match="tool_call_id"):
        oq.to_messages(_chat(messages=[{"role": "tool", "content": "x"}]).messages)


def test_sampling_defaults_limits_and_json_schema() -> None:
    limits = request_parts.Limits(max_tokens=100, timeout_s=5)
    params = oq.sampling_params(_chat(stop="END", seed=3), limits)
    assert (
        params.max_tokens,
        params.temperature,
        params.top_p,
        params.stop,
        params.seed,
        params.timeout_s,
    ) == (100, 1.0, 1.0, ("END",), 3, 5)
    assert oq.sampling_params(_chat(max_completion_tokens=7, max_tokens=50), limits).max_tokens == 7
    # Above the server's limit: lowered to it, not refused (opencode asks for 32000).
    assert oq.sampling_params(_chat(max_tokens=32000), limits).max_tokens == 100
    assert oq.sampling_params(_chat(max_completion_tokens=32000), limits).max_tokens == 100
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "integer"}}}
    assert json.loads(oq.sampling_params(_chat(response_format=fmt), limits).json_schema or "") == {
        "type": "integer"
    }
    assert json.loads(
        oq.sampling_params(_chat(response_format={"type": "json_object"}), limits).json_schema or ""
    ) == {"type": "object"}
    assert oq.sampling_params(_chat(response_format={"type": "text"}), limits).json_schema is None


@pytest.mark.parametrize(
    "fields,param",
    [
        ({"n": 2}, "n"),
        ({"top_logprobs": 2}, "top_logprobs"),
        (
            {"response_format": {"type": "json_schema", "json_schema": {"name": "x"}}},
            "response_format",
        ),
        ({"tool_choice": "required"}, "tool_choice"),
        (
            {
                "tools": [WEATHER],
                "tool_choice": "required",
                "response_format": {"type": "json_object"},
            },
            "tool_choice",
        ),
    ],
)
def test_unsupported_chat_fields_are_refused_by_name(fields, param) -> None:
    with pytest.raises(InvalidRequest) as err:
        oq.sampling_params(_chat(**fields), request_parts.Limits())
    assert err.value.param == param


def test_tool_choice_none_and_named() -> None:
    other = {"type": "function", "function": {"name": "other"}}
    assert oq.tools_for_engine(_chat(tools=[WEATHER], tool_choice="none")) is None
    named = _chat(
        tools=[WEATHER, other], tool_choice={"type": "function", "function": {"name": "other"}}
    )
    assert [t.name for t in oq.tools_for_engine(named) or []] == ["other"]
    with pytest.raises(InvalidRequest):
        oq.tools_for_engine(
            _chat(tools=[WEATHER], tool_choice={"type": "function", "function": {"name": "x"}})
        )


def test_prompts_and_embedding_inputs() -> None:
    assert oq.completion_prompt("a") == "a"
    assert oq.completion_prompt(["a"]) == "a"
    assert oq.completion_prompt([1, 2]) == [1, 2]
    assert oq.completion_prompt([[1, 2]]) == [1, 2]
    with pytest.raises(InvalidRequest):
        oq.completion_prompt(["a", "b"])
    assert oq.embedding_inputs("x") == ["x"]
    assert oq.embedding_inputs([5, 6]) == [[5, 6]]
    assert oq.embedding_inputs(["x", "y"]) == ["x", "y"]
    with pytest.raises(InvalidRequest):
        oq.embedding_inputs([])


# ---------------------------------------------------------------- engine → responses


def test_chat_completion_with_tool_call_and_reasoning() -> None:
    final = Delta(finish_reason="stop", usage=Usage(10, 5, 4))
    call = ToolCall("call_1", "get_weather", '{"city": "Oslo"}')
    body = oa.chat_completion(
        request_id="r",
        model="m",
        created=1,
        text="",
        reasoning="thinking",
        final=final,
        calls=[call],
    ).model_dump()
    choice = body["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["content"] is None
    assert choice["message"]["reasoning_content"] == "thinking"
    assert choice["message"]["tool_calls"][0]["function"]["name"] == "get_weather"
    assert body["usage"] == {
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "total_tokens": 15,
        "prompt_tokens_details": {"cached_tokens": 4},
    }


def test_finish_reasons() -> None:
    assert finish_reason(Delta(finish_reason="stop")) == "stop"
    assert finish_reason(Delta(finish_reason="length")) == "length"
    assert finish_reason(Delta(finish_reason="timeout")) == "length"


def test_sse_framing_and_usage_chunk() -> None:
    event = oa.sse(
        oa.chat_delta(
            request_id="r", model="m", created=1, delta={"content": "é"}, with_usage_field=True
        )
    )
    assert event.startswith(b"data: ") and event.endswith(b"\n\n")
    body = json.loads(event[6:])
    assert body["choices"][0]["delta"] == {"content": "é"} and body["usage"] is None
    usage = oa.chat_delta(
        request_id="r", model="m", created=1, delta={}, usage=oa.usage_out(Usage(3, 2))
    )
    assert usage["choices"] == [] and usage["usage"]["total_tokens"] == 5
    assert oa.DONE == b"data: [DONE]\n\n"


def test_base64_embeddings_decode_to_the_same_floats() -> None:
    vector = [0.5, -0.25, 1.0]
    encoded = oa.encode_embedding(vector, "base64")
    assert isinstance(encoded, str)
    assert list(struct.unpack("<3f", base64.b64decode(encoded))) == vector
    assert oa.encode_embedding(vector, "float") == vector


def test_error_body_shape() -> None:
    assert oa.error_body("m", type_="t", code="c", param="p") == {
        "error": {"message": "m", "type": "t", "param": "p", "code": "c"}
    }


# ---------------------------------------------------------------- forced calls, streaming, logprobs


def test_forced_tool_choice_becomes_a_schema_of_one_call() -> None:
    other = {"type": "function", "function": {"name": "other"}}
    params = oq.sampling_params(
        _chat(tools=[WEATHER, other], tool_choice="required"), request_parts.Limits()
    )
    schema = json.loads(params.json_schema or "")
    assert [o["properties"]["name"] for o in schema["anyOf"]] == [
        {"const": "get_weather"},
        {"const": "other"},
    ]
    assert schema["anyOf"][0]["properties"]["arguments"] == WEATHER["function"]["parameters"]
    named = oq.sampling_params(
        _chat(
            tools=[WEATHER, other], tool_choice={"type": "function", "function": {"name": "other"}}
        ),
        request_parts.Limits(),
    )
    assert json.loads(named.json_schema or "")["properties"]["name"] == {"const": "other"}
    assert (
        oq.sampling_params(
            _chat(tools=[WEATHER], tool_choice="auto"), request_parts.Limits()
        ).json_schema
        is None
    )


def _gate(pieces: list[str], hold_all: bool = False):
    gate = StreamGate({"get_weather"}, hold_all=hold_all)
    sent = [gate.feed(p) for p in pieces]
    rest, calls = gate.finish(_ids())
    return sent, rest, [(c.name, json.loads(c.arguments)) for c in calls]


def test_stream_gate_sends_words_before_a_call_and_holds_the_call() -> None:
    call = '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>'
    sent, rest, calls = _gate(["Let me ", "look.", "<tool", call[5:40], call[40:], " Done."])
    assert sent == ["Let me ", "look.", "", "", "", ""]  # "<tool" waits: it may open a call
    assert rest == " Done." and calls == [("get_weather", {"city": "Oslo"})]
    # Words that merely look like a marker's start are sent once they cannot be one.
    assert _gate(["a <", "b> c"]) == (["a ", "<b> c"], "", [])


def test_stream_gate_holds_answers_that_open_like_a_bare_call() -> None:
    assert _gate(['{"name": "get_weather",', ' "arguments": {}}']) == (
        ["", ""],
        "",
        [("get_weather", {})],
    )
    assert _gate(["get_", 'weather\n{"city": "x"}']) == (
        ["", ""],
        "",
        [("get_weather", {"city": "x"})],
    )
    # A first word that only starts like a tool name is released as soon as it differs.
    assert _gate(["get", " me a coffee"]) == (["", "get me a coffee"], "", [])
    assert _gate(["plain words"], hold_all=True) == ([""], "plain words", [])


def test_logprobs_in_chat_and_legacy_shapes() -> None:
    lps = [TokenLogprob("hé", -0.5, (("hé", -0.5), ("a", -1.5))), TokenLogprob("!", -0.1)]
    chat = oa.chat_logprobs(lps)
    assert chat is not None and chat.content is not None
    first = chat.content[0]
    assert (first.token, first.logprob, first.bytes) == ("hé", -0.5, [104, 195, 169])
    assert [(t.token, t.logprob) for t in first.top_logprobs] == [("hé", -0.5), ("a", -1.5)]
    legacy = oa.completion_logprobs(lps, offset=3)
    assert legacy is not None
    assert legacy.tokens == ["hé", "!"] and legacy.text_offset == [3, 5]
    assert legacy.top_logprobs == [{"hé": -0.5, "a": -1.5}, {}]
    assert oa.chat_logprobs(None) is None
    assert (
        oq.sampling_params(_chat(logprobs=True, top_logprobs=3), request_parts.Limits()).logprobs
        == 3
    )
    assert oq.sampling_params(_chat(logprobs=True), request_parts.Limits()).logprobs == 0
    assert oq.sampling_params(_chat(), request_parts.Limits()).logprobs is None


def _rerank(**fields) -> s.RerankRequest:
    return s.RerankRequest.model_validate({"model": "rr", "query": "q", **fields})


def test_rerank_documents_as_strings_or_objects_within_bounds() -> None:
    req = _rerank(documents=["a", {"text": "b"}, {"text": "", "title": "ignored"}])
    assert oq.rerank_texts(req.documents) == ["a", "b", ""]
    with pytest.raises(InvalidRequest, match="documents is empty") as empty:
        oq.rerank_texts(_rerank(documents=[]).documents)
    assert empty.value.param == "documents"
    oq.rerank_texts(["d"] * oq.MAX_RERANK_DOCUMENTS)
    with pytest.raises(InvalidRequest, match="1001 items but at most 1000") as many:
        oq.rerank_texts(["d"] * (oq.MAX_RERANK_DOCUMENTS + 1))
    assert many.value.param == "documents"


def test_only_rank_pooling_models_may_rerank() -> None:
    oq.check_reranker("bge-reranker-v2-m3", "reranker", 4)
    oq.check_reranker("catalog-reranker", "reranker", None)  # header silent: the engine checks
    with pytest.raises(
        InvalidRequest,
        match=r"^model bge-m3 is not a reranking model "
        r"\(embedding, pooling type cls\); use a bge-reranker GGUF",
    ) as err:
        oq.check_reranker("bge-m3", "embedding", 2)
    assert err.value.param == "model"
    with pytest.raises(InvalidRequest, match=r"\(chat, pooling type none\)"):
        oq.check_reranker("gemma", "chat", None)
    with pytest.raises(InvalidRequest, match=r"\(reranker, pooling type mean\)"):
        oq.check_reranker("odd", "reranker", 1)


def test_rerank_results_best_first_with_relevance_between_0_and_1() -> None:
    body = oa.rerank_response(
        request_id="rerank-1",
        model="rr",
        texts=["a", "b", "c", "d"],
        scores=[-1.0, 3.0, -1.0, 0.0],
        top_n=None,
        return_documents=False,
        tokens=12,
    ).model_dump(exclude_none=True)
    assert [r["index"] for r in body["results"]] == [1, 3, 0, 2]  # ties keep request order
    assert body["results"][1]["relevance_score"] == 0.5
    assert body["usage"] == {"prompt_tokens": 12, "total_tokens": 12}
    assert body["object"] == "list" and "document" not in body["results"][0]
    top = oa.rerank_response(
        request_id="r",
        model="rr",
        texts=["a", "b"],
        scores=[0.1, 0.2],
        top_n=1,
        return_documents=True,
        tokens=2,
    )
    assert [(r.index, r.document and r.document.text) for r in top.results] == [(1, "b")]
    # A very negative or positive logit must not overflow the sigmoid.
    assert oa.relevance(-1000.0) == 0.0 and oa.relevance(1000.0) == 1.0
    assert oa.relevance(2.0) == pytest.approx(0.8807970779778823)
    with pytest.raises(ValueError):
        _rerank(documents=["a"], top_n=0)


def test_kimi_call_ids_are_kept_so_history_round_trips() -> None:
    text = (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
        '<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|>'
        "<|tool_call_begin|>functions.get_weather:1"
        '<|tool_call_argument_begin|>{"city": "Rome"}<|tool_call_end|>'
        "<|tool_calls_section_end|>"
    )
    parsed = parse_tool_calls(text, {"get_weather"}, _ids())
    assert [c.id for c in parsed.tool_calls] == [
        "functions.get_weather:0",
        "functions.get_weather:1",
    ]
    # A call without Kimi's id form still gets an OpenAI-style one.
    bare = text.replace("functions.get_weather:0", "get_weather")
    assert parse_tool_calls(bare, {"get_weather"}, _ids()).tool_calls[0].id == "call_0"


def test_glm45_string_arguments_stay_strings_when_the_schema_says_so() -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "lookup",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "zip": {"type": "string"},
                        "n": {"type": "integer"},
                        "tags": {"type": "array"},
                    },
                },
            },
        }
    ]
    text = (
        "<tool_call>lookup<arg_key>zip</arg_key><arg_value>123</arg_value>"
        "<arg_key>n</arg_key><arg_value>5</arg_value>"
        '<arg_key>tags</arg_key><arg_value>["a", "b"]</arg_value></tool_call>'
    )
    schemas = ChatCall.of([], tools=[ToolSpec.from_openai(t) for t in tools]).tool_schemas()
    call = parse_tool_calls(text, schemas).tool_calls[0]
    assert json.loads(call.arguments) == {"zip": "123", "n": 5, "tags": ["a", "b"]}
    # The streaming gate parses with the same schemas.
    gate = StreamGate(schemas)
    gate.feed(text)
    assert json.loads(gate.finish()[1][0].arguments)["zip"] == "123"


def test_thinking_switch_from_chat_template_kwargs_and_reasoning_effort() -> None:
    assert oq.template_kwargs(_chat()) is None
    assert oq.template_kwargs(_chat(chat_template_kwargs={"enable_thinking": False})) == {
        "enable_thinking": False
    }
    assert oq.template_kwargs(_chat(reasoning_effort="none")) == {"enable_thinking": False}
    assert oq.template_kwargs(_chat(reasoning_effort="high")) == {"enable_thinking": True}
    both = _chat(reasoning_effort="low", chat_template_kwargs={"clear_thinking": False})
    assert oq.template_kwargs(both) == {"clear_thinking": False, "enable_thinking": True}
    with pytest.raises(InvalidRequest, match="contradicts") as e:
        oq.template_kwargs(
            _chat(reasoning_effort="none", chat_template_kwargs={"enable_thinking": True})
        )
    assert e.value.param == "reasoning_effort"
    with pytest.raises(InvalidRequest, match="cannot set messages"):
        oq.template_kwargs(_chat(chat_template_kwargs={"messages": []}))
