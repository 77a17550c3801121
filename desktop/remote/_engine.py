"""A remote OpenAI-compatible server (vLLM, SGLang, llama-server, Ollama, EdgeDesk) as an
engine the scheduler drives like a local model.

Every call passes the network gate first (offline mode and ForceOffline refuse it before
any connection) and is logged with host, path, purpose and byte counts, never content;
a stream that began but ended before the answer did is logged as broken off, with why.
Streams stop within one event of ``cancel`` being set: leaving the ``with`` block closes
the upstream response, so the remote stops generating for a client that went away.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx

from desktop.base.defaults import GENERATION_TIMEOUT_S
from desktop.base.errors import Cancelled, InvalidRequest, RemoteError
from desktop.base.net import NetGate, Transport, explain
from desktop.engine import (
    ChatCall,
    Delta,
    EngineStats,
    FinishReason,
    GenerationParams,
    LoadReport,
    ModelSpec,
    RemotePlan,
    Timings,
    Usage,
    gate_calls,
)
from desktop.remote import _translate as wire
from desktop.remote._registry import RemoteEndpoint

PURPOSE = "remote engine"
PARALLEL = 8  # requests in flight to one remote; the cluster batches them, we don't


def _timeout(read_s: float) -> httpx.Timeout:
    # Connecting fails fast; a big model may think for minutes before its first token.
    return httpx.Timeout(connect=10.0, read=read_s, write=30.0, pool=30.0)


class RemoteEngine:
    """One model on a remote server; the scheduler's thread(s) call it, ``close`` once.

    Calls are plain blocking requests; up to ``parallel`` may run at once from
    different threads (httpx's client is thread-safe).
    """

    parallel = PARALLEL

    def __init__(
        self,
        spec: ModelSpec,
        endpoint: RemoteEndpoint,
        model: str,
        *,
        key: str | None,
        net: NetGate,
        transport: Transport,
        timeout_s: float = GENERATION_TIMEOUT_S,
    ) -> None:
        self.endpoint = endpoint
        self.model = model
        self.host = urlsplit(endpoint.base_url).hostname or endpoint.base_url
        self._net = net
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._client: httpx.Client = transport.client(timeout=_timeout(timeout_s), headers=headers)
        self._lock = threading.Lock()
        self._busy = 0
        self._prompt_tokens = 0
        self._completion_tokens = 0
        self._requests = 0
        self.report = LoadReport(
            model_id=spec.model_id,
            path=spec.path,
            context_length=0,
            gpu_layers=0,
            offload_supported=False,
            load_s=0.0,
            estimated_bytes=0,
            template_source=f"remote:{endpoint.name}",
            notes=(f"runs on {endpoint.name} ({self.host}) — leaves this device",),
        )

    # ------------------------------------------------------------------ plumbing
    def _url(self, route: str) -> str:
        return f"{self.endpoint.base_url}{route}"

    def _gate(self, method: str, url: str) -> None:
        if self._net.refusal() is not None:
            self._net.check(method, url, PURPOSE)  # logs the refusal and raises

    def _request(self, route: str, body: Mapping[str, Any]) -> Any:
        """A whole (non-streamed) POST; the parsed JSON answer."""
        url = self._url(route)
        self._gate("POST", url)
        data = json.dumps(body).encode()
        received, error = 0, ""
        try:
            response = self._client.post(
                url, content=data, headers={"Content-Type": "application/json"}
            )
            received = len(response.content)
            if response.status_code >= 400:
                error = f"HTTP {response.status_code}"
                raise wire.status_error(
                    response.status_code,
                    _json_or_text(response),
                    self.endpoint.name,
                    response.headers.get("retry-after"),
                )
            return response.json()
        except httpx.HTTPError as exc:
            error = type(exc).__name__
            raise _transport_error(exc, self.host, self.endpoint.name) from None
        except ValueError:
            error = "bad JSON"
            raise RemoteError(
                f"remote '{self.endpoint.name}' answered with something that is "
                "not JSON; is the URL an OpenAI-compatible /v1 base?"
            ) from None
        finally:
            self._net.record("POST", url, PURPOSE, sent=len(data), received=received, error=error)

    def _stream(
        self, route: str, body: Mapping[str, Any], cancel: threading.Event | None, *, chat: bool
    ) -> Iterator[Delta]:
        url = self._url(route)
        self._gate("POST", url)
        data = json.dumps(body).encode()
        state = _StreamState(time.perf_counter())
        with self._lock:
            self._busy += 1
            self._requests += 1
        try:
            with self._client.stream(
                "POST",
                url,
                content=data,
                headers={"Content-Type": "application/json", "Accept": "text/event-stream"},
            ) as resp:
                if resp.status_code >= 400:
                    resp.read()
                    state.received = len(resp.content)
                    state.error = f"HTTP {resp.status_code}"
                    raise wire.status_error(
                        resp.status_code,
                        _json_or_text(resp),
                        self.endpoint.name,
                        resp.headers.get("retry-after"),
                    )
                state.opened = True
                for payload in wire.sse_payloads(
                    state.lines(resp), f"remote '{self.endpoint.name}'"
                ):
                    if cancel is not None and cancel.is_set():
                        state.error = "cancelled"
                        yield Delta(
                            finish_reason="cancelled",
                            usage=state.usage or Usage(),
                            timings=state.timings(),
                        )
                        return  # leaving the with-block closes the upstream stream
                    piece = state.take(payload, chat=chat)
                    if piece is not None:
                        yield piece
                if not state.ended and state.finish is None:
                    state.error = "the remote closed the stream before the answer ended"
                    raise RemoteError(
                        f"remote '{self.endpoint.name}' closed the stream before "
                        "the answer ended; try again",
                        code="remote_stream_dropped",
                    )
            state.complete = True  # all of the answer arrived, whatever the caller does now
            self._count(state.usage)
            yield Delta(
                finish_reason=state.finish or "stop",
                usage=state.usage or Usage(),
                timings=state.timings(),
                tool_calls=wire.tool_calls_of(state.calls),  # passed on as they came
            )
        except RemoteError as exc:
            state.error = state.error or str(exc)  # an error event the remote sent mid-answer
            raise
        except httpx.HTTPError as exc:
            state.error = type(exc).__name__
            if state.first is not None and not isinstance(exc, httpx.TimeoutException):
                raise RemoteError(
                    f"the connection to remote '{self.endpoint.name}' dropped "
                    f"mid-answer ({exc or type(exc).__name__}); try again",
                    code="remote_stream_dropped",
                ) from None
            raise _transport_error(exc, self.host, self.endpoint.name) from None
        except GeneratorExit:
            # The local caller stopped reading (its client went away): we closed the stream.
            if not state.complete:
                state.error = state.error or "the caller left before the answer ended"
            raise
        finally:
            with self._lock:
                self._busy -= 1
            broken = state.broken_off()
            self._net.record(
                "POST",
                url,
                PURPOSE,
                sent=len(data),
                received=state.received,
                error=f"broke off: {state.error}"[:300] if broken else state.error,
                broken_off=broken,
            )

    def _count(self, usage: Usage | None) -> None:
        if usage is not None:
            with self._lock:
                self._prompt_tokens += usage.prompt_tokens
                self._completion_tokens += usage.completion_tokens

    # ------------------------------------------------------------------ the Engine protocol
    def stream_chat(self, call: ChatCall, cancel: threading.Event | None = None) -> Iterator[Delta]:
        """Stream the remote's chat answer (its own template applies; kwargs forwarded).

        The remote's tool calls come structured and pass on as they are, on the final
        chunk: no markup is written for them, so nothing parses them again. Its text is
        read as a local model's (``gate_calls``): a forced call comes back as the JSON
        text its grammar (``response_format``) asked for, and a remote that answers in
        call markup rather than structured calls still makes calls."""
        body = wire.chat_body(self.model, call)
        return gate_calls(self._stream("/chat/completions", body, cancel, chat=True), call)

    def stream_completion(
        self, prompt: str, params: GenerationParams, cancel: threading.Event | None = None
    ) -> Iterator[Delta]:
        """Stream the remote's plain continuation of ``prompt``."""
        return self._stream(
            "/completions", wire.completion_body(self.model, prompt, params), cancel, chat=False
        )

    def stream_infill(
        self,
        prefix: str,
        suffix: str,
        params: GenerationParams,
        cancel: threading.Event | None = None,
    ) -> Iterator[Delta]:
        """Fill-in-the-middle through the completions API's ``suffix`` (if the remote has it)."""
        return self._stream(
            "/completions",
            wire.completion_body(self.model, prefix, params, suffix),
            cancel,
            chat=False,
        )

    def embed(
        self, texts: Sequence[str | list[int]], cancel: threading.Event | None = None
    ) -> list[list[float]]:
        """The remote's embeddings of ``texts``, in order."""
        return self.embed_counted(texts, cancel)[0]

    def embed_counted(
        self, texts: Sequence[str | list[int]], cancel: threading.Event | None = None
    ) -> tuple[list[list[float]], int | None]:
        """The embeddings and the prompt tokens the remote counted (None: it did not say).

        Only the remote knows its tokenizer; ``tokenize`` here is an estimate, so usage
        reports and key budgets take the remote's count whenever it sends one. ``cancel``
        is checked before asking (the remote does the work; one request is not cut).
        """
        if cancel is not None and cancel.is_set():
            raise Cancelled("the embedding request was cancelled")
        answer = self._request("/embeddings", {"model": self.model, "input": list(texts)})
        try:
            items = sorted(answer["data"], key=lambda d: d["index"])
            vectors = [[float(x) for x in item["embedding"]] for item in items]
        except (KeyError, TypeError) as exc:
            raise RemoteError(
                f"remote '{self.endpoint.name}' sent embeddings we cannot read ({exc})"
            ) from None
        usage = wire.usage_of(answer) if isinstance(answer, dict) else None
        if usage is None or usage.prompt_tokens <= 0:
            return vectors, None
        self._count(usage)
        return vectors, usage.prompt_tokens

    def tokenize(self, text: str, *, add_bos: bool = True, special: bool = True) -> list[int]:
        """An estimate (about 4 characters a token) for usage accounting: the remote's own
        tokenizer is not reachable through the OpenAI API."""
        return [0] * max(1, (len(text) + 3) // 4)

    def rerank(
        self, query: str, documents: Sequence[str], cancel: threading.Event | None = None
    ) -> list[float]:
        """Not offered for remote models."""
        raise InvalidRequest(
            f"{self.endpoint.name}/{self.model} is a remote model; reranking "
            "runs on local reranker models only",
            param="model",
        )

    def detokenize(self, tokens: Sequence[int]) -> str:
        """Not offered: the remote's vocabulary is not reachable through the OpenAI API."""
        raise InvalidRequest("this model cannot take token ids; send text", param="prompt")

    def render(self, call: ChatCall) -> str:
        """Not offered: the remote applies its own chat template."""
        raise InvalidRequest(
            f"{self.endpoint.name}/{self.model} cannot count chat tokens", param="model"
        )

    def prompt_tokens(self, prompt: str) -> list[int]:
        """The same estimate as ``tokenize``."""
        return self.tokenize(prompt)

    def stats(self) -> EngineStats:
        """Requests in flight and tokens the remote reported."""
        with self._lock:
            return EngineStats(
                slots_total=self.parallel,
                slots_busy=self._busy,
                prompt_tokens_processed=self._prompt_tokens,
                tokens_decoded=self._completion_tokens,
                decode_steps=self._completion_tokens,
            )

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()


@dataclass
class _StreamState:
    """What one streamed answer has brought so far (bytes, first token, usage, calls)."""

    started: float
    received: int = 0
    ended: bool = False  # saw [DONE]
    first: float | None = None
    finish: FinishReason | None = None
    usage: Usage | None = None
    error: str = ""
    # index -> id, name, arguments
    calls: dict[int, tuple[str, str, str]] = field(default_factory=dict)
    opened: bool = False  # the remote accepted the request and began to stream
    complete: bool = False  # the whole answer arrived

    def broken_off(self) -> bool:
        """Whether the stream began but ended before the answer did (not by a cancel)."""
        return self.opened and not self.complete and self.error != "cancelled"

    def lines(self, response: httpx.Response) -> Iterator[str]:
        """The response's lines, counting bytes and noting the end marker."""
        for line in response.iter_lines():
            self.received += len(line) + 1
            if line.strip() == "data: [DONE]":
                self.ended = True
            yield line

    def take(self, payload: Mapping[str, Any], *, chat: bool) -> Delta | None:
        """Fold one event in; the text chunk to pass on, if it carries text."""
        self.usage = wire.usage_of(payload) or self.usage
        for index, call_id, name, arguments in wire.tool_call_pieces(payload):
            known = self.calls.get(index, ("", "", ""))
            self.calls[index] = (known[0] or call_id, known[1] + name, known[2] + arguments)
        text, reasoning, done = wire.delta_of(payload, chat=chat)
        self.finish = done or self.finish
        if not (text or reasoning):
            return None
        self.first = self.first or time.perf_counter()
        return Delta(text=text, reasoning=reasoning)

    def timings(self) -> Timings:
        """Time to first token and generation time after it."""
        now = time.perf_counter()
        ttft = (self.first or now) - self.started
        return Timings(
            prompt_s=ttft, time_to_first_token_s=ttft, generation_s=now - (self.first or now)
        )


def _json_or_text(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return response.text[:300]


def _transport_error(exc: httpx.HTTPError, host: str, name: str) -> RemoteError:
    if isinstance(exc, httpx.TimeoutException):
        return RemoteError(
            f"remote '{name}' ({host}) did not answer in time; it may be "
            "overloaded, try again later",
            status=504,
            code="remote_timeout",
        )
    return RemoteError(f"remote '{name}': {explain(exc, host)}", code="remote_unreachable")


def list_models(
    endpoint: RemoteEndpoint,
    *,
    key: str | None,
    net: NetGate,
    transport: Transport,
    timeout_s: float = 10.0,
) -> list[str]:
    """The model ids the remote's ``/models`` lists (one logged call)."""
    url = f"{endpoint.base_url}/models"
    if net.refusal() is not None:
        net.check("GET", url, PURPOSE)  # logs the refusal and raises
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    received, error = 0, ""
    try:
        with transport.client(timeout=_timeout(timeout_s), headers=headers) as client:
            response = client.get(url)
            received = len(response.content)
            if response.status_code >= 400:
                error = f"HTTP {response.status_code}"
                raise wire.status_error(
                    response.status_code, _json_or_text(response), endpoint.name
                )
            data = response.json()
        return [str(m["id"]) for m in data.get("data", [])]
    except httpx.HTTPError as exc:
        error = type(exc).__name__
        raise _transport_error(exc, urlsplit(url).hostname or url, endpoint.name) from None
    except (ValueError, KeyError, TypeError, AttributeError):
        error = "bad answer"
        raise RemoteError(
            f"remote '{endpoint.name}' did not answer like an OpenAI-compatible "
            "server at /v1/models; check the URL"
        ) from None
    finally:
        net.record("GET", url, PURPOSE, sent=0, received=received, error=error)


def remote_spec(endpoint: RemoteEndpoint, model: str) -> ModelSpec:
    """The scheduler's spec for ``NAME/MODEL``: no file, the endpoint in its plan."""
    return ModelSpec(
        path=None,
        model_id=f"{endpoint.name}/{model}",
        kind="chat",
        plan=RemotePlan(name=endpoint.name, base_url=endpoint.base_url, model=model),
    )
