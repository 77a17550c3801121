"""The real server on 127.0.0.1, driven by the official openai client and raw httpx."""

from __future__ import annotations

import asyncio
import base64
import json
import struct

import httpx
import openai
import pytest

from tests.conftest import wait_until
from tests.near_tie import assert_same_answer, steps, steps_of_completion
from tests.server.conftest import Served

HI = [{"role": "user", "content": "hello world"}]


def _auth(server: Served) -> dict[str, str]:
    return {"Authorization": f"Bearer {server.key}"}


def test_models_lists_registered_files_by_stable_id(client) -> None:
    assert [m.id for m in client.models.list()] == ["tiny-chat", "tiny-embed"]


def test_a_loaded_model_says_where_it_runs_and_others_say_nothing(client, server) -> None:
    client.chat.completions.create(model="tiny-chat", messages=HI, max_tokens=1)
    loaded = {m.model_id for m in server.scheduler.loaded()}
    cards = {m.id: m.to_dict() for m in client.models.list()}
    # This CPU build of llama.cpp puts none of the tiny model's 3 layers on a GPU.
    assert cards["tiny-chat"]["edgedesk"] == {
        "placement": "CPU only",
        "layers_total": 3,
        "layers_offloaded": 0,
        "devices": [],
    }
    for model_id, card in cards.items():
        assert ("edgedesk" in card) == (model_id in loaded)


def test_chat_answer_with_usage_and_request_id(client) -> None:
    raw = client.chat.completions.with_raw_response.create(
        model="tiny-chat", messages=HI, max_tokens=6, temperature=0, seed=1
    )
    reply = raw.parse()
    assert raw.headers["x-request-id"].startswith("req_")
    assert reply.choices[0].message.role == "assistant"
    assert reply.choices[0].message.content
    assert reply.choices[0].finish_reason == "length"
    assert reply.usage.completion_tokens == 6 and reply.usage.prompt_tokens > 3
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + 6


def test_streaming_deltas_and_include_usage(client) -> None:
    chunks = list(
        client.chat.completions.create(
            model="tiny-chat",
            messages=HI,
            max_tokens=5,
            temperature=0,
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    whole = client.chat.completions.create(
        model="tiny-chat", messages=HI, max_tokens=5, temperature=0, logprobs=True, top_logprobs=2
    )
    # The same answer, up to llama.cpp's rounding for the prompt found cached (near_tie.py).
    assert_same_answer(steps(whole.choices[0].logprobs.content), text, "streamed")
    assert chunks[0].choices[0].delta.role == "assistant"
    finals = [c for c in chunks if c.choices and c.choices[0].finish_reason]
    assert [c.choices[0].finish_reason for c in finals] == ["length"]
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == 5


def test_raw_sse_ends_with_done(server: Served) -> None:
    body = {"model": "tiny-chat", "messages": HI, "max_tokens": 3, "stream": True}
    with httpx.stream(
        "POST", f"{server.url}/chat/completions", json=body, headers=_auth(server), timeout=30
    ) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        lines = [line for line in response.iter_lines() if line]
    assert all(line.startswith("data: ") for line in lines)
    assert lines[-1] == "data: [DONE]"
    assert "usage" not in json.loads(lines[1][6:])  # only with include_usage


def test_async_client_and_text_completion(server: Served) -> None:
    async def go():
        async with openai.AsyncOpenAI(
            base_url=server.url, api_key=server.key, max_retries=0
        ) as aclient:
            chat = await aclient.chat.completions.create(
                model="tiny-chat", messages=HI, max_tokens=4
            )
            text = await aclient.completions.create(
                model="tiny-chat", prompt="the cat", max_tokens=4, temperature=0, logprobs=2
            )
            stream = await aclient.completions.create(
                model="tiny-chat", prompt="the cat", max_tokens=4, temperature=0, stream=True
            )
            streamed = "".join([c.choices[0].text async for c in stream if c.choices])
            return chat, text, streamed

    chat, text, streamed = asyncio.run(go())
    assert chat.usage.completion_tokens == 4
    assert text.object == "text_completion" and text.choices[0].text
    assert_same_answer(steps_of_completion(text.choices[0].logprobs), streamed, "streamed")


def test_completion_from_token_ids(client) -> None:
    # Token ids are turned back into text by the model's own tokenizer (ids 260, 261 are
    # "▁hello" and "▁world" in the tiny vocabulary), so both prompts continue alike.
    by_text = client.completions.create(
        model="tiny-chat", prompt=" hello world", max_tokens=4, temperature=0, logprobs=2
    )
    by_ids = client.completions.create(
        model="tiny-chat", prompt=[260, 261], max_tokens=4, temperature=0
    )
    # The same prompt twice: the same answer up to llama.cpp's rounding (near_tie.py).
    reference = steps_of_completion(by_text.choices[0].logprobs)
    assert_same_answer(reference, by_ids.choices[0].text, "by ids")
    with pytest.raises(openai.BadRequestError):
        client.completions.create(model="tiny-chat", prompt=[10**7], max_tokens=2)


def test_tools_are_accepted_and_shown_to_the_model(client) -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather for a city",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        }
    ]
    plain = client.chat.completions.create(model="tiny-chat", messages=HI, max_tokens=2)
    with_tools = client.chat.completions.create(
        model="tiny-chat", messages=HI, max_tokens=2, tools=tools, tool_choice="auto"
    )
    assert with_tools.usage.prompt_tokens > plain.usage.prompt_tokens + 10
    ignored = client.chat.completions.create(
        model="tiny-chat", messages=HI, max_tokens=2, tools=tools, tool_choice="none"
    )
    assert ignored.usage.prompt_tokens == plain.usage.prompt_tokens
    stream = list(
        client.chat.completions.create(
            model="tiny-chat", messages=HI, max_tokens=4, tools=tools, stream=True
        )
    )
    assert stream[-1].choices[0].finish_reason in ("length", "tool_calls")


def test_json_schema_output_is_valid(client) -> None:
    schema = {
        "type": "object",
        "properties": {"answer": {"enum": ["yes", "no"]}},
        "required": ["answer"],
        "additionalProperties": False,
    }
    reply = client.chat.completions.create(
        model="tiny-chat",
        messages=HI,
        max_tokens=200,
        temperature=0.7,
        seed=5,
        response_format={"type": "json_schema", "json_schema": {"name": "a", "schema": schema}},
    )
    assert json.loads(reply.choices[0].message.content)["answer"] in ("yes", "no")
    # A schema whose every answer is short: the grammar must end it, so the random model
    # stops by itself and the whole answer parses (no "if it happened to stop" escape).
    flag = {
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "required": ["ok"],
        "additionalProperties": False,
    }
    for seed in (1, 2, 3):
        done = client.chat.completions.create(
            model="tiny-chat",
            messages=HI,
            max_tokens=60,
            temperature=1.0,
            seed=seed,
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "flag", "schema": flag},
            },
        )
        assert done.choices[0].finish_reason == "stop"
        assert set(json.loads(done.choices[0].message.content)) == {"ok"}
    obj = client.chat.completions.create(
        model="tiny-chat",
        messages=HI,
        max_tokens=30,
        temperature=0,
        response_format={"type": "json_object"},
    )
    assert obj.choices[0].message.content.lstrip().startswith("{")


@pytest.mark.parametrize(
    ("schema", "named"),
    [
        ({"type": "no-such-type"}, "at type"),
        ({"not": {"type": "string"}}, "'not'"),
    ],
)
def test_a_schema_llama_cpp_cannot_use_is_a_400_naming_it(client, schema, named) -> None:
    with pytest.raises(openai.BadRequestError) as err:
        client.chat.completions.create(
            model="tiny-chat",
            messages=HI,
            max_tokens=5,
            response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": schema}},
        )
    assert named in err.value.body["message"] and err.value.body["param"] == "json_schema"


def test_embeddings_float_base64_tokens_and_cache(client, server: Served) -> None:
    floats = client.embeddings.create(
        model="tiny-embed", input=["hello", "the cat"], encoding_format="float"
    )
    assert [d.index for d in floats.data] == [0, 1]
    assert floats.usage.prompt_tokens > 0
    raw = httpx.post(
        f"{server.url}/embeddings",
        headers=_auth(server),
        json={"model": "tiny-embed", "input": "hello", "encoding_format": "base64"},
    ).json()
    decoded = base64.b64decode(raw["data"][0]["embedding"])
    vector = struct.unpack(f"<{len(decoded) // 4}f", decoded)
    assert vector == pytest.approx(floats.data[0].embedding, abs=1e-6)
    one = client.embeddings.create(model="tiny-embed", input="hello")
    assert one.data[0].embedding == pytest.approx(floats.data[0].embedding, abs=1e-6)
    metrics = httpx.get(f"{server.root}/metrics", headers=_auth(server)).text
    assert 'edgedesk_cache_lookups_total{cache="embeddings",result="hit"}' in metrics


def test_health_is_open_and_metrics_count_requests(server: Served, client) -> None:
    client.chat.completions.create(model="tiny-chat", messages=HI, max_tokens=2)
    health = httpx.get(f"{server.root}/health").json()
    assert health["status"] == "ok" and "tiny-chat" in health["loaded_models"]
    assert httpx.get(f"{server.root}/metrics").status_code == 401
    text = httpx.get(f"{server.root}/metrics", headers=_auth(server)).text
    assert 'edgedesk_requests_total{route="/v1/chat/completions",status="200"}' in text
    assert "edgedesk_time_to_first_token_seconds_bucket" in text
    assert 'edgedesk_model_loaded{model="tiny-chat"} 1' in text
    assert "edgedesk_queue_depth 0" in text


def test_access_log_has_ids_and_counts_but_never_content(server: Served, client) -> None:
    secret = "zebra-secret-prompt-3141"
    raw = client.chat.completions.with_raw_response.create(
        model="tiny-chat",
        messages=[{"role": "user", "content": secret}],
        max_tokens=3,
        temperature=0,
        extra_headers={"X-Request-ID": "trace-42"},
    )
    reply = raw.parse()
    assert raw.headers["x-request-id"] == "trace-42"
    # The line is written once the response has gone out, so it may trail the reply.
    path = server.ctx.paths.log_dir / "access.log"

    def logged() -> str:  # the first line written makes the file: it may not be there yet
        text = path.read_text() if path.exists() else ""
        return text if "trace-42" in text else ""

    log = wait_until(logged, 30, "the request's access-log line")
    # Greedy, so the answer is always the same (a random 3-token answer can be a few
    # letters that occur in any log line by chance).
    assert secret not in log and reply.choices[0].message.content not in log.replace(
        "tiny-chat", ""
    )  # the model id is allowed, the answer is not
    record = next(json.loads(line) for line in log.splitlines() if "trace-42" in line)
    assert record["key_name"] == "tests" and record["model"] == "tiny-chat"
    assert record["tokens_out"] == 3 and record["status"] == 200
    assert record["latency_ms"] >= record["ttft_ms"] > 0
