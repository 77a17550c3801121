"""Remote models through the local API with the real ``openai`` client: the IDE's view."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest

from desktop.base.net import read_log
from desktop.remote import keyring_set
from tests.fixtures.pictures import png
from tests.fixtures.vision import b64, data_url
from tests.remote.conftest import Local
from tests.remote.fake_openai import EMBED_TOKENS_EACH, Fake


def test_remote_models_are_listed(local: Local, fake: Fake) -> None:
    before = fake.requests.count("GET /v1/models")
    ids = [m.id for m in local.client.models.list()]
    assert {"gpu/echo", "gpu/embedder"} <= set(ids)
    assert [m.id for m in local.client.models.list()] == ids
    # An IDE polls /v1/models; the remote is asked once per TTL, not per poll.
    assert fake.requests.count("GET /v1/models") == before + 1


def test_chat_whole_and_streamed(local: Local, fake: Fake, edgedesk_home: Path) -> None:
    answer = local.client.chat.completions.create(
        model="gpu/echo", messages=[{"role": "user", "content": "private plans"}]
    )
    assert answer.choices[0].message.content == "private plans "
    assert answer.model == "gpu/echo" and answer.usage is not None
    assert answer.usage.completion_tokens == 2
    assert fake.bodies[-1]["model"] == "echo"  # the remote sees its own model id
    stream = local.client.chat.completions.create(
        model="gpu/echo", messages=[{"role": "user", "content": "one two three"}], stream=True
    )
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text == "one two three "
    log = read_log(edgedesk_home / "logs" / "network.jsonl")
    chats = [e for e in log if e.path == "/v1/chat/completions"]
    assert len(chats) == 2 and all(e.bytes_sent > 0 and e.bytes_received > 0 for e in chats)
    assert "private" not in (edgedesk_home / "logs" / "network.jsonl").read_text()


def test_completions_and_embeddings(local: Local) -> None:
    done = local.client.completions.create(model="gpu/echo", prompt="once upon")
    assert done.choices[0].text == "once upon "
    vectors = local.client.embeddings.create(model="gpu/embedder", input=["a", "abc"])
    assert [v.embedding[0] for v in vectors.data] == [1.0, 3.0]  # remote order restored


def test_embedding_usage_is_the_remotes_own_count_when_it_sends_one(local: Local) -> None:
    texts = ["a short text", "and a somewhat longer second text to embed"]
    counted = local.client.embeddings.create(model="gpu/embedder", input=texts)
    assert counted.usage.prompt_tokens == EMBED_TOKENS_EACH * 2  # as the remote counted
    # A remote that sends no usage: estimated (about four characters a token).
    estimated = local.client.embeddings.create(model="gpu/bare-embedder", input=texts)
    assert estimated.usage.prompt_tokens == sum((len(t) + 3) // 4 for t in texts)
    # Ollama's route reports the same count.
    reply = httpx.post(
        f"{local.root}/api/embed",
        timeout=60,
        json={"model": "gpu/embedder", "input": ["x", "y", "z"]},
    )
    assert reply.json()["prompt_eval_count"] == EMBED_TOKENS_EACH * 3


def test_rate_limit_reaches_the_client_as_429(local: Local) -> None:
    with pytest.raises(openai.RateLimitError) as caught:
        local.client.chat.completions.create(
            model="gpu/busy", messages=[{"role": "user", "content": "hi"}]
        )
    assert "remote 'gpu' is rate-limiting us" in str(caught.value)
    assert "retry after 7 s" in str(caught.value)


def test_wrong_remote_key_is_not_a_local_auth_failure(local: Local) -> None:
    keyring_set("gpu", "sk-wrong")
    local.ctx.scheduler.unload("gpu/echo")  # a loaded engine keeps the key it was made with
    with pytest.raises(openai.APIStatusError) as caught:
        local.client.chat.completions.create(
            model="gpu/echo", messages=[{"role": "user", "content": "hi"}]
        )
    assert caught.value.status_code == 502
    assert "refused the API key" in str(caught.value)


def test_dropped_stream_is_an_error_not_a_short_answer(local: Local) -> None:
    with pytest.raises(openai.APIStatusError) as caught:
        local.client.chat.completions.create(
            model="gpu/drop", messages=[{"role": "user", "content": "hi"}]
        )
    assert "dropped mid-answer" in str(caught.value) or "closed the stream" in str(caught.value)
    with pytest.raises(openai.APIError):
        stream = local.client.chat.completions.create(
            model="gpu/drop", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        for _ in stream:
            pass


def test_client_disconnect_closes_the_upstream_stream(
    local: Local, fake: Fake, edgedesk_home: Path
) -> None:
    fake.abandoned.clear()
    stream = local.client.chat.completions.create(
        model="gpu/endless", messages=[{"role": "user", "content": "go"}], stream=True
    )
    for seen, _ in enumerate(stream):
        if seen == 3:
            break
    stream.close()
    assert fake.abandoned.wait(30), "the remote kept generating for a client that left"
    scheduler = local.ctx.scheduler
    assert scheduler.wait_until(lambda: not scheduler.busy, 30)  # the call has ended
    entry = read_log(edgedesk_home / "logs" / "network.jsonl")[-1]
    # The network log does not show it as a whole answer: stopped on purpose (the server
    # cancels the stream for a client that left), or closed before the end.
    assert entry.path == "/v1/chat/completions" and entry.bytes_received > 0
    assert entry.reason in {"cancelled", "broke off: the caller left before the answer ended"}


def test_unknown_remote_model_is_a_404(local: Local) -> None:
    with pytest.raises(openai.NotFoundError):
        local.client.chat.completions.create(
            model="gpu/nope", messages=[{"role": "user", "content": "hi"}]
        )


def test_responses_and_messages_routes_reach_the_remote(local: Local) -> None:
    base = str(local.client.base_url).rstrip("/")
    with httpx.Client(timeout=60) as http:
        answer = http.post(
            f"{base}/responses", json={"model": "gpu/echo", "input": "through responses"}
        )
        assert answer.status_code == 200, answer.text
        assert "through responses" in answer.text
        message = http.post(
            f"{base}/messages",
            json={
                "model": "gpu/echo",
                "max_tokens": 16,
                "messages": [{"role": "user", "content": "through messages"}],
            },
        )
        assert message.status_code == 200, message.text
        assert message.json()["content"][0]["text"] == "through messages "


WEATHER = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather of a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


def test_remote_tool_calls_reach_the_client(local: Local, fake: Fake) -> None:
    answer = local.client.chat.completions.create(
        model="gpu/tooler",
        messages=[{"role": "user", "content": "weather in Paris?"}],
        tools=WEATHER,
    )  # type: ignore[arg-type]
    calls = answer.choices[0].message.tool_calls
    assert answer.choices[0].finish_reason == "tool_calls" and calls
    assert calls[0].function.name == "get_weather"  # type: ignore[union-attr]
    assert json.loads(calls[0].function.arguments) == {"city": "Paris"}  # type: ignore[union-attr]
    assert fake.bodies[-1]["tools"][0]["function"]["name"] == "get_weather"
    # Passed through, not written out as markup and parsed again: the remote's own id
    # and its arguments text, byte for byte.
    assert calls[0].id == "call_1"
    assert calls[0].function.arguments == '{"city": "Paris"}'  # type: ignore[union-attr]
    assert answer.choices[0].message.content is None


def test_a_streamed_remote_tool_call_reaches_the_client_as_it_was_sent(
    local: Local, fake: Fake
) -> None:
    stream = local.client.chat.completions.create(
        model="gpu/tooler",
        messages=[{"role": "user", "content": "weather in Paris?"}],
        tools=WEATHER,
        stream=True,
    )  # type: ignore[arg-type]
    deltas = [c.choices[0].delta for c in stream if c.choices]
    calls = [call for d in deltas for call in d.tool_calls or ()]
    assert [(c.id, c.function.name, c.function.arguments) for c in calls] == [  # type: ignore[union-attr]
        ("call_1", "get_weather", '{"city": "Paris"}')
    ]
    assert not "".join(d.content or "" for d in deltas)  # no markup among the words


def _pictures_sent(body: dict[str, Any]) -> list[str]:
    """The data URLs of the image parts in the last message a remote was sent."""
    content = body["messages"][-1]["content"]
    return [
        p["image_url"]["url"]
        for p in content
        if isinstance(p, dict) and p.get("type") == "image_url"
    ]


def test_pictures_are_passed_on_to_a_remote_whose_server_decides(local: Local, fake: Fake) -> None:
    red = png(rgb=(255, 0, 0))
    answer = local.client.chat.completions.create(
        model="gpu/echo",
        messages=[
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is this?"},
                    {"type": "image_url", "image_url": {"url": data_url(red)}},
                ],
            }
        ],
    )
    assert answer.choices[0].message.content  # answered, not refused as "cannot see"
    assert _pictures_sent(fake.bodies[-1]) == [data_url(red)]
    with anthropic.Anthropic(base_url=local.root, api_key="unused", max_retries=0) as client:
        client.messages.create(
            model="gpu/echo",
            max_tokens=16,
            messages=[
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "image",
                            "source": {
                                "type": "base64",
                                "media_type": "image/png",
                                "data": b64(red),
                            },
                        },
                        {"type": "text", "text": "and this?"},
                    ],
                }
            ],
        )
    assert _pictures_sent(fake.bodies[-1]) == [data_url(red)]
    # The local checks still apply before anything is sent: not a picture is a 400.
    before = len(fake.bodies)
    with pytest.raises(openai.BadRequestError) as refused:
        local.client.chat.completions.create(
            model="gpu/echo",
            messages=[
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "image_url",
                            "image_url": {"url": data_url(b"PK\x03\x04" + bytes(64))},
                        }
                    ],
                }
            ],
        )
    assert "ZIP archive" in refused.value.body["message"]
    assert len(fake.bodies) == before
    # The listing claims "vision" only for what is known to see: not for a remote.
    listed = local.client.models.list().model_dump()["data"]
    echo = next(m for m in listed if m["id"] == "gpu/echo")
    assert "vision" not in (echo.get("capabilities") or [])
