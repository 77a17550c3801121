"""A streamed answer's status, headers and opening event go out once the request is
admitted, before its prompt is read; refusals still keep their own status.

The tiny model's decode loop is held inside its first prompt decode (``LoopGate``), so
no token can exist until the test releases it: whatever arrives meanwhile provably came
before the first token. Server, sockets and clients are real.
"""

from __future__ import annotations

import functools
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic
import httpx
import ollama
import openai
import pytest

from desktop.base.config import ServerSettings
from desktop.engine._loader import LoadedEngine, load_engine
from desktop.engine._scheduler import Scheduler
from desktop.engine._types import ModelSpec
from desktop.root.context import build_context
from desktop.server._asgi import services_for
from desktop.server._model_directory import ResolverDirectory
from desktop.server._runner import ServerRunner
from tests.benchmarks.bench_vs_llama_server import _words
from tests.conftest import wait_until
from tests.engine.loop_gate import LoopGate

WAIT_S = 30  # bounds a failure only: a passing test never waits it out
MODEL = "tiny-chat"


@dataclass
class Held:
    """A server whose tiny-chat decode loop the test can hold."""

    url: str  # .../v1
    scheduler: Scheduler
    gate: LoopGate
    engines: list[LoadedEngine]
    openai: openai.OpenAI
    anthropic: anthropic.Anthropic
    ollama: ollama.Client

    @property
    def root(self) -> str:
        return self.url.removesuffix("/v1")


@pytest.fixture(scope="module")
def held(tmp_path_factory: pytest.TempPathFactory, tiny_chat: Path) -> Iterator[Held]:
    """One slot, a queue of one, and a gate on the decode loop."""
    ctx = build_context(
        environ={"EDGEDESK_HOME": str(tmp_path_factory.mktemp("early"))},
        cli_settings={"engine.parallel": 1},
    )
    ctx.resolver.register(tiny_chat)
    gate = LoopGate()
    engines: list[LoadedEngine] = []

    def load(spec: ModelSpec) -> LoadedEngine:
        engines.append(load_engine(spec, open_engine=functools.partial(LoadedEngine, on_step=gate)))
        return engines[-1]

    scheduler = Scheduler(load, ctx.resolver, queue_max=1)
    runner = ServerRunner(
        services_for(
            scheduler,
            ResolverDirectory(ctx.resolver),
            ServerSettings(require_key=False).model_copy(update={"port": 0}),
            None,
        )
    )
    runner.start()
    root = runner.url.removesuffix("/v1")
    try:
        with (
            openai.OpenAI(base_url=runner.url, api_key="none", max_retries=0, timeout=WAIT_S) as oa,
            anthropic.Anthropic(base_url=root, api_key="none", max_retries=0, timeout=WAIT_S) as an,
            ollama.Client(host=root, timeout=WAIT_S) as lama,
        ):
            scheduler.load(MODEL)
            yield Held(runner.url, scheduler, gate, engines, oa, an, lama)
    finally:
        gate.release()
        runner.stop()
        scheduler.close()
        ctx.close()


@pytest.fixture
def gate(held: Held) -> Iterator[LoopGate]:
    """The decode loop held at its next decode; released (and idle again) after the test."""
    held.gate.hold()
    try:
        yield held.gate
    finally:
        held.gate.release()
        wait_until(lambda: not held.scheduler.busy, WAIT_S, "the model idle again")


def _ask(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def _openai_chat(held: Held, text: str) -> tuple[Any, Callable[[], str]]:
    stream = held.openai.chat.completions.create(
        model=MODEL, messages=_ask(text), max_tokens=4, stream=True
    )
    events = iter(stream)
    first = next(events)
    assert first.choices[0].delta.role == "assistant"
    assert not first.choices[0].delta.content
    return first, lambda: "".join(c.choices[0].delta.content or "" for c in events if c.choices)


def _anthropic(held: Held, text: str) -> tuple[Any, Callable[[], str]]:
    events = iter(
        held.anthropic.messages.create(model=MODEL, max_tokens=4, messages=_ask(text), stream=True)
    )
    first = next(events)
    assert first.type == "message_start"
    assert first.message.content == []

    def rest() -> str:
        return "".join(
            e.delta.text
            for e in events
            if e.type == "content_block_delta" and e.delta.type == "text_delta"
        )

    return first, rest


def _responses(held: Held, text: str) -> tuple[Any, Callable[[], str]]:
    events = iter(
        held.openai.responses.create(
            model=MODEL, input=text, max_output_tokens=4, store=False, stream=True
        )
    )
    created, progress = next(events), next(events)
    assert (created.type, progress.type) == ("response.created", "response.in_progress")
    assert created.response.status == "in_progress"
    return created, lambda: "".join(
        e.delta for e in events if e.type == "response.output_text.delta"
    )


def _ollama(held: Held, text: str) -> tuple[Any, Callable[[], str]]:
    parts = iter(
        held.ollama.chat(model=MODEL, messages=_ask(text), stream=True, options={"num_predict": 4})
    )
    first = next(parts)
    assert first.message.role == "assistant" and not first.message.content and not first.done
    return first, lambda: "".join(p.message.content or "" for p in parts)


OPENERS = {
    "/v1/chat/completions": _openai_chat,
    "/v1/messages": _anthropic,
    "/v1/responses": _responses,
    "/api/chat": _ollama,
}


@pytest.mark.parametrize("route", OPENERS)
def test_the_opening_event_arrives_before_the_first_token(
    held: Held, gate: LoopGate, route: str
) -> None:
    # The loop is held at its next decode, the prompt's own: no token can be sampled
    # until the release below, so an opening read before then came before any token.
    _, rest = OPENERS[route](held, f"early headers on {route}, please")
    assert gate.held.wait(WAIT_S)  # the prompt is being read: the request reached a slot
    assert held.scheduler.busy
    gate.release()
    rest()  # then the answer streams to its end, as before


def test_a_text_completion_flushes_its_headers_before_the_first_token(
    held: Held, gate: LoopGate
) -> None:
    """Its opening is empty (its first event is its first text), but the 200 goes out."""
    body = {"model": MODEL, "prompt": "early headers, plain", "max_tokens": 4, "stream": True}
    with httpx.stream("POST", f"{held.url}/completions", json=body, timeout=WAIT_S) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        assert gate.held.wait(WAIT_S)
        gate.release()
        assert response.read().rstrip().endswith(b"data: [DONE]")


def test_refusals_keep_their_status_while_a_stream_reads_its_prompt(
    held: Held, gate: LoopGate
) -> None:
    """The context overflow is still a 400 naming both numbers, a full queue a 429, on
    each streamed route, while another stream is admitted and held in its prompt."""
    _, holder_rest = _openai_chat(held, "the one holding the slot")
    assert gate.held.wait(WAIT_S)
    queued = threading.Thread(target=lambda: _post_stream(held, "/v1/chat/completions", "queued"))
    queued.start()
    wait_until(lambda: held.scheduler.queue_depth == 1, WAIT_S, "one request queued")
    for route in ("/v1/chat/completions", "/v1/messages", "/v1/responses", "/api/chat"):
        status, headers, body = _post_stream(held, route, "hi")
        assert status == 429, (route, body)
        assert int(headers["retry-after"]) >= 1
        assert "error" in json.loads(body)
    gate.release()
    holder_rest()
    queued.join(WAIT_S)
    context = held.engines[0].context_length
    for route in ("/v1/chat/completions", "/v1/messages", "/v1/responses", "/api/chat"):
        status, _, body = _post_stream(held, route, "hello " * (context + 10))
        assert status == 400, (route, body)
        assert f"but the model's context is {context}" in body


def _post_stream(held: Held, route: str, text: str) -> tuple[int, httpx.Headers, str]:
    bodies: dict[str, dict[str, Any]] = {
        "/v1/chat/completions": {"messages": _ask(text), "max_tokens": 2},
        "/v1/messages": {"messages": _ask(text), "max_tokens": 2},
        "/v1/responses": {"input": text, "max_output_tokens": 2, "store": False},
        "/api/chat": {"messages": _ask(text), "options": {"num_predict": 2}},
    }
    body = {"model": MODEL, **bodies[route], "stream": True}
    with httpx.stream("POST", f"{held.root}{route}", json=body, timeout=WAIT_S) as response:
        return response.status_code, response.headers, response.read().decode()


def test_a_client_gone_while_the_prompt_is_read_stops_the_work(held: Held, gate: LoopGate) -> None:
    body = {"model": MODEL, "messages": _ask("leaving early"), "max_tokens": 1000, "stream": True}
    with httpx.stream(
        "POST", f"{held.url}/chat/completions", json=body, timeout=WAIT_S
    ) as response:
        assert response.status_code == 200
        lines = response.iter_lines()  # kept: a dropped iterator closes the response
        assert next(lines).startswith("data: ")  # the opening
        assert gate.held.wait(WAIT_S)
    # The client hung up while its prompt was still being read; the server sees it.
    engine = held.engines[0]
    slots = engine._loop._slots  # type: ignore[union-attr]  # the request's own cancel event
    wait_until(
        lambda: any(s.request is not None and s.request.cancel.is_set() for s in slots),
        WAIT_S,
        "the request's cancel set",
    )
    decoded = engine.stats().tokens_decoded
    gate.release()
    wait_until(lambda: not held.scheduler.busy, WAIT_S, "the request cancelled")
    # Cancelled within a token or two of the release, not 1000 tokens later.
    assert engine.stats().tokens_decoded - decoded < 20


def test_an_anthropic_stream_pings_while_its_prompt_is_read(
    held: Held, gate: LoopGate, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As Anthropic's API does, so a client or relay that drops idle connections keeps it."""
    monkeypatch.setattr("desktop.server._pump.KEEPALIVE_S", 0.05)
    body = {"model": MODEL, "messages": _ask("ping me"), "max_tokens": 4, "stream": True}
    with httpx.stream("POST", f"{held.root}/v1/messages", json=body, timeout=WAIT_S) as response:
        assert response.status_code == 200
        lines = response.iter_lines()
        names = (line.removeprefix("event: ") for line in lines if line.startswith("event: "))
        # message_start and the opening's ping, then pings while no token can exist.
        assert [next(names) for _ in range(4)] == ["message_start", "ping", "ping", "ping"]
        assert gate.held.wait(WAIT_S)
        gate.release()
        rest = list(names)
    assert rest[-1] == "message_stop"
    assert "content_block_delta" in rest


def test_a_responses_stream_says_in_progress_while_its_prompt_is_read(
    held: Held, gate: LoopGate, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Codex drops a stream after minutes without an event (comments do not count): the
    Responses API repeats ``response.in_progress``, numbered in order with the answer."""
    monkeypatch.setattr("desktop.server._pump.KEEPALIVE_S", 0.05)
    body = {"model": MODEL, "input": "keep me", "max_output_tokens": 4, "stream": True}
    with httpx.stream("POST", f"{held.url}/responses", json=body, timeout=WAIT_S) as response:
        assert response.status_code == 200
        events = (
            json.loads(line.removeprefix("data: "))
            for line in response.iter_lines()
            if line.startswith("data: ")
        )
        opening = [next(events) for _ in range(4)]  # while no token can exist
        assert gate.held.wait(WAIT_S)
        gate.release()
        every = opening + list(events)
    assert [e["type"] for e in opening] == [
        "response.created",
        "response.in_progress",
        "response.in_progress",
        "response.in_progress",
    ]
    assert [e["sequence_number"] for e in every] == list(range(len(every)))
    assert every[-1]["type"] in ("response.completed", "response.incomplete")  # 4 tokens
    assert any(e["type"] == "response.output_text.delta" for e in every)


def test_other_streams_send_no_keepalive(
    held: Held, gate: LoopGate, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chat completions have no such event: a chat stream's quiet spell stays quiet."""
    monkeypatch.setattr("desktop.server._pump.KEEPALIVE_S", 0.01)
    body = {"model": MODEL, "messages": _ask("no pings"), "max_tokens": 4, "stream": True}
    with httpx.stream(
        "POST", f"{held.url}/chat/completions", json=body, timeout=WAIT_S
    ) as response:
        lines = response.iter_lines()
        assert next(lines).startswith("data: ")  # the opening
        assert gate.held.wait(WAIT_S)
        # Held for 20 keepalive intervals: proving that nothing is sent needs a span of
        # time (a stream with a keepalive sends ~20 here, see the Anthropic test).
        time.sleep(0.2)
        gate.release()
        rest = [line for line in lines if line]
    assert rest[-1] == "data: [DONE]"
    assert all(line.startswith("data: {") for line in rest[:-1]), rest


def test_the_newcomer_benchmark_does_not_take_the_opening_for_a_word(
    held: Held, gate: LoopGate
) -> None:
    """bench_vs_llama_server sends its 4th request once 3 streams have a first token;
    taking the opening (``"content": ""``, before the prompt is read) for one sent it
    while their prompts were still unread, and its TTFT then included them."""
    body = {
        "model": MODEL,
        "messages": _ask("bench gate"),
        "max_tokens": 4,
        "temperature": 0.0,
        "stream": True,
    }
    with httpx.stream(
        "POST", f"{held.url}/chat/completions", json=body, timeout=WAIT_S
    ) as response:
        lines = response.iter_lines()
        opening = next(line for line in lines if line.startswith("data: "))
        assert gate.held.wait(WAIT_S)  # no token can exist yet
        assert json.loads(opening[6:])["choices"][0]["delta"] == {
            "role": "assistant",
            "content": "",
        }
        assert _words(opening) == ""
        gate.release()
        assert any(_words(line) for line in lines)  # the first word counts
