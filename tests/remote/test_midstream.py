"""A remote that fails after some tokens: each API's client gets the tokens, then our error.

The fake remote's ``drop`` model sends two words and cuts the connection; ``fails`` sends
two words and then an error event. The local server has already answered 200 by then, so
the failure must arrive inside the stream, in the shape each protocol's clients parse.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest

from desktop.base.net import read_log
from desktop.cli import main
from desktop.server._metrics import AccessRecord
from tests.remote.conftest import Local
from tests.remote.fake_openai import FAILURE, Fake

HI = [{"role": "user", "content": "hi"}]
# What each failing model means for the user: the remote's name and the cause.
CAUSES = {"drop": "remote 'gpu'", "fails": f"remote 'gpu' failed mid-answer: {FAILURE}"}


def _sse_data(text: str) -> list[str]:
    return [line[6:] for line in text.splitlines() if line.startswith("data: ")]


@pytest.mark.parametrize("model", ["drop", "fails"])
def test_chat_stream_ends_with_an_error_event_after_the_tokens(local: Local, model: str) -> None:
    words: list[str] = []
    with pytest.raises(openai.APIError) as caught:
        stream = local.client.chat.completions.create(
            model=f"gpu/{model}", messages=HI, stream=True
        )  # type: ignore[arg-type]
        for chunk in stream:
            if chunk.choices:
                words.append(chunk.choices[0].delta.content or "")
    assert "".join(words) == "hi again "  # what the remote sent before failing
    assert not isinstance(caught.value, openai.APIConnectionError)  # not a dropped socket
    assert CAUSES[model] in caught.value.message
    body = caught.value.body
    assert isinstance(body, dict) and str(body["code"]).startswith("remote_")


def test_chat_stream_error_is_followed_by_done(local: Local) -> None:
    with httpx.stream(
        "POST",
        f"{local.client.base_url}chat/completions",
        timeout=60,
        json={"model": "gpu/fails", "messages": HI, "stream": True},
    ) as reply:
        assert reply.status_code == 200
        events = _sse_data(reply.read().decode())
    assert events[-1] == "[DONE]"
    error = json.loads(events[-2])["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert FAILURE in error["message"] and error["code"] == "remote_error"


def test_completions_stream_ends_with_the_error(local: Local) -> None:
    text: list[str] = []
    with pytest.raises(openai.APIError) as caught:
        for piece in local.client.completions.create(
            model="gpu/drop", prompt="hello there", stream=True
        ):
            text.append(piece.choices[0].text if piece.choices else "")
    assert "".join(text) == "hello again "
    assert "remote 'gpu'" in caught.value.message


def test_anthropic_client_raises_our_error_after_the_text(local: Local) -> None:
    text: list[str] = []
    with (
        anthropic.Anthropic(base_url=local.root, api_key="unused", max_retries=0) as claude,
        pytest.raises(anthropic.APIStatusError) as caught,
    ):
        with claude.messages.stream(model="gpu/fails", max_tokens=16, messages=HI) as stream:  # type: ignore[arg-type]
            for piece in stream.text_stream:
                text.append(piece)
    assert "".join(text) == "hi again "
    body = caught.value.body
    assert isinstance(body, dict) and body["error"]["type"] == "api_error"
    assert FAILURE in body["error"]["message"]


def test_responses_stream_ends_with_response_failed(local: Local) -> None:
    with httpx.stream(
        "POST",
        f"{local.client.base_url}responses",
        timeout=60,
        json={"model": "gpu/drop", "input": "hi", "stream": True},
    ) as reply:
        assert reply.status_code == 200
        events: list[dict[str, Any]] = [json.loads(d) for d in _sse_data(reply.read().decode())]
    deltas = "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")
    assert deltas == "hi again "
    last = events[-1]
    assert last["type"] == "response.failed"
    assert last["response"]["status"] == "failed"
    assert last["response"]["error"]["code"] == "remote_stream_dropped"
    assert "remote 'gpu'" in last["response"]["error"]["message"]
    numbers = [e["sequence_number"] for e in events]
    assert numbers == list(range(len(events)))  # still one numbered sequence


@pytest.mark.parametrize(
    ("path", "body", "key"),
    [
        ("/api/chat", {"messages": HI}, "message"),
        ("/api/generate", {"prompt": "hi"}, "response"),
    ],
)
def test_ollama_stream_ends_with_an_error_line(
    local: Local, path: str, body: dict[str, Any], key: str
) -> None:
    with httpx.stream(
        "POST", local.root + path, timeout=60, json={"model": "gpu/fails", **body}
    ) as reply:
        assert reply.status_code == 200
        lines = [json.loads(line) for line in reply.iter_lines() if line]
    assert set(lines[-1]) == {"error"} and FAILURE in lines[-1]["error"]
    said = "".join(line[key]["content"] if key == "message" else line[key] for line in lines[:-1])
    assert said == "hi again " and not any(line.get("done") for line in lines[:-1])


def test_a_remote_that_stops_sending_mid_answer_times_out_in_the_stream(
    local: Local, fake: Fake
) -> None:
    local.ctx.apply_settings({"server.generation_timeout_s": 1})
    local.ctx.scheduler.unload("gpu/halts")
    fake.release.clear()
    try:
        with httpx.stream(
            "POST",
            f"{local.client.base_url}chat/completions",
            timeout=60,
            json={"model": "gpu/halts", "messages": HI, "stream": True},
        ) as reply:
            events = _sse_data(reply.read().decode())
    finally:
        fake.release.set()
    error = json.loads(events[-2])["error"]
    assert error["code"] == "remote_timeout" and "did not answer in time" in error["message"]
    said = "".join(json.loads(e)["choices"][0]["delta"].get("content") or "" for e in events[:-2])
    assert said == "hi again "


class AccessLines:
    """The access log's records, as they are written; ``seen`` waits for a request id."""

    def __init__(self) -> None:
        self.records: dict[str, dict[str, Any]] = {}
        self.written = threading.Condition()

    def __call__(self, record: AccessRecord) -> None:
        line = json.loads(record.line())  # the JSON line the file gets
        with self.written:
            self.records[line["request_id"]] = line
            self.written.notify_all()

    def seen(self, request_id: str) -> dict[str, Any]:
        """The record of ``request_id`` (written once the response has gone out)."""
        with self.written:
            assert self.written.wait_for(lambda: request_id in self.records, timeout=30)
            return self.records[request_id]


@pytest.fixture
def access(local: Local) -> Iterator[AccessLines]:
    lines = AccessLines()
    unsubscribe = local.runner.access_log.subscribe(lines)
    try:
        yield lines
    finally:
        unsubscribe()


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/messages", "/api/chat"])
def test_the_access_log_records_a_stream_that_failed_mid_way(
    local: Local, access: AccessLines, path: str
) -> None:
    body: dict[str, Any] = {"model": "gpu/fails", "messages": HI, "stream": True, "max_tokens": 8}
    for model, request_id in (("gpu/fails", f"broken{len(path)}"), ("gpu/echo", "whole")):
        with httpx.stream(
            "POST",
            local.root + path,
            timeout=60,
            json={**body, "model": model},
            headers={"X-Request-ID": request_id},
        ) as reply:
            assert reply.status_code == 200
            reply.read()
    broken, whole = access.seen(f"broken{len(path)}"), access.seen("whole")
    assert broken["status"] == 200  # what the client was told before the failure
    assert broken["error"] == CAUSES["fails"]
    assert whole["status"] == 200 and whole["error"] is None


@pytest.mark.parametrize("model", ["drop", "fails"])
def test_the_network_log_says_a_remote_stream_broke_off(
    local: Local, model: str, edgedesk_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in (model, "echo"):
        with httpx.stream(
            "POST",
            f"{local.client.base_url}chat/completions",
            timeout=60,
            json={"model": f"gpu/{name}", "messages": HI, "stream": True},
        ) as reply:
            assert reply.status_code == 200
            reply.read()  # ends after [DONE]: by then the remote call has been logged
    log = [
        e
        for e in read_log(edgedesk_home / "logs" / "network.jsonl")
        if e.path == "/v1/chat/completions"
    ]
    broken, whole = log[-2:]
    assert broken.broken_off and broken.reason.startswith("broke off: ")
    if model == "fails":
        assert FAILURE in broken.reason  # the remote's own word on why
    assert broken.bytes_received > 0  # the two words that did arrive
    assert not whole.broken_off and whole.reason == "" and whole.bytes_received > 0
    capsys.readouterr()
    assert main(["network", "log", "--limit", "2"]) == 0
    first, second = capsys.readouterr().out.splitlines()
    assert "BROKEN" in first and f"{broken.bytes_received} bytes received" in first
    assert "BROKEN" not in second and "sent" in second
