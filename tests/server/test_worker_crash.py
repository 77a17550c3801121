"""A model's worker dies mid-answer: every protocol's client gets its own error, and the
server (this process) answers the next request from a fresh worker.

The crash is real: SIGKILL (what the OS does out of memory) or SIGABRT (what a failed
``GGML_ASSERT`` does) sent to the worker process while the official client streams.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import anthropic
import ollama
import openai
import pytest

from tests.server.conftest import Served, serve

HI = [{"role": "user", "content": "hello world"}]
LONG = 4000  # tokens: far more than the stream lives before the kill


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, tiny_chat: Path) -> Iterator[Served]:
    with serve(tmp_path_factory.mktemp("crash"), [tiny_chat], require_key=False) as server:
        yield server


def _worker_pid(server: Served) -> int:
    pid: int = server.scheduler.with_engine("tiny-chat", lambda engine: engine.pid)  # type: ignore[attr-defined]
    return pid


def _kill(server: Served, sig: signal.Signals) -> Callable[[], None]:
    pid = _worker_pid(server)
    return lambda: os.kill(pid, sig)


def _answers_again(server: Served, crashed: int) -> None:
    with openai.OpenAI(base_url=server.url, api_key="x", max_retries=0, timeout=60) as client:
        reply = client.chat.completions.create(model="tiny-chat", messages=HI, max_tokens=5)  # type: ignore[arg-type]
    assert reply.choices[0].finish_reason == "length"
    assert _worker_pid(server) != crashed  # a fresh worker


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGABRT], ids=["kill", "abort"])
def test_openai_stream_gets_a_server_error(served: Served, sig: signal.Signals) -> None:
    crashed = _worker_pid(served)
    kill = _kill(served, sig)
    with (
        openai.OpenAI(base_url=served.url, api_key="x", max_retries=0, timeout=60) as client,
        pytest.raises(openai.APIError) as caught,
    ):
        stream = client.chat.completions.create(
            model="tiny-chat",
            messages=HI,  # type: ignore[arg-type]
            max_tokens=LONG,
            stream=True,
        )
        for n, _chunk in enumerate(stream):
            if n == 2:
                kill()
    assert "stopped unexpectedly" in caught.value.message
    assert sig.name in caught.value.message
    body = caught.value.body
    assert isinstance(body, dict) and body.get("type", body.get("error", {}).get("type")) in (
        "server_error",
        None,
    )
    _answers_again(served, crashed)


def test_openai_request_without_stream_gets_500(served: Served) -> None:
    crashed = _worker_pid(served)
    kill = _kill(served, signal.SIGKILL)
    failures: list[openai.APIStatusError] = []

    def ask() -> None:
        with openai.OpenAI(base_url=served.url, api_key="x", max_retries=0, timeout=60) as c:
            try:
                c.chat.completions.create(model="tiny-chat", messages=HI, max_tokens=LONG)  # type: ignore[arg-type]
            except openai.APIStatusError as exc:
                failures.append(exc)

    asking = threading.Thread(target=ask)
    asking.start()
    assert served.scheduler.wait_until(
        lambda: any(m.slots_busy for m in served.scheduler.loaded()), 30
    )
    kill()
    asking.join(60)
    assert len(failures) == 1
    assert failures[0].status_code == 500
    assert "stopped unexpectedly" in failures[0].message
    _answers_again(served, crashed)


SIGNALS = pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGABRT], ids=["kill", "abort"])


@SIGNALS
def test_anthropic_stream_gets_an_api_error_event(served: Served, sig: signal.Signals) -> None:
    crashed = _worker_pid(served)
    kill = _kill(served, sig)
    with (
        anthropic.Anthropic(base_url=served.root, api_key="x", max_retries=0) as claude,
        pytest.raises(anthropic.APIStatusError) as caught,
    ):
        with claude.messages.stream(model="tiny-chat", max_tokens=LONG, messages=HI) as stream:  # type: ignore[arg-type]
            for n, _text in enumerate(stream.text_stream):
                if n == 2:
                    kill()
    body = caught.value.body
    assert isinstance(body, dict)
    assert body["error"]["type"] == "api_error"
    assert "stopped unexpectedly" in body["error"]["message"]
    _answers_again(served, crashed)


@SIGNALS
def test_ollama_stream_gets_an_error_line(served: Served, sig: signal.Signals) -> None:
    crashed = _worker_pid(served)
    kill = _kill(served, sig)
    client = ollama.Client(host=served.root)
    with pytest.raises(ollama.ResponseError) as caught:
        for n, _part in enumerate(
            client.chat(model="tiny-chat", messages=HI, stream=True, options={"num_predict": LONG})
        ):
            if n == 2:
                kill()
    assert "stopped unexpectedly" in caught.value.error
    _answers_again(served, crashed)


@SIGNALS
def test_responses_stream_ends_with_response_failed(served: Served, sig: signal.Signals) -> None:
    crashed = _worker_pid(served)
    kill = _kill(served, sig)
    events = []
    with openai.OpenAI(base_url=served.url, api_key="x", max_retries=0, timeout=60) as client:
        stream = client.responses.create(
            model="tiny-chat", input="hello", max_output_tokens=LONG, stream=True
        )
        deltas = 0
        for event in stream:
            events.append(event)
            if event.type == "response.output_text.delta":
                deltas += 1
                if deltas == 2:
                    kill()
    assert events[-1].type == "response.failed"
    error = events[-1].response.error
    assert error is not None and "stopped unexpectedly" in error.message
    _answers_again(served, crashed)


def test_a_model_that_aborts_on_load_is_refused_and_the_server_lives(
    served: Served, tmp_path: Path
) -> None:
    from tests.fixtures.tiny_gguf import write_tiny_llama

    served.ctx.resolver.register(write_tiny_llama(tmp_path / "aborts.gguf", n_head_kv=3))
    with openai.OpenAI(base_url=served.url, api_key="x", max_retries=0, timeout=60) as client:
        with pytest.raises(openai.APIStatusError) as caught:
            client.chat.completions.create(model="aborts", messages=HI, max_tokens=5)  # type: ignore[arg-type]
        assert "GGML_ASSERT" in caught.value.message
        assert "loading aborts" in caught.value.message
        reply = client.chat.completions.create(model="tiny-chat", messages=HI, max_tokens=5)  # type: ignore[arg-type]
    assert reply.choices[0].message.content
