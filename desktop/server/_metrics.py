"""Prometheus text metrics and the access log (who called what, never the content).

Hand-rolled rather than prometheus-client: a handful of counters and histograms, no
process-wide registry (so two servers in one process, as in tests, stay apart).
"""

from __future__ import annotations

import json
import logging
import threading
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from desktop.engine import EngineStats

if TYPE_CHECKING:
    from desktop.engine import Scheduler

LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
TTFT_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)

Labels = tuple[tuple[str, str], ...]


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(labels: Labels) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in labels) + "}"


class _Histogram:
    def __init__(self, buckets: tuple[float, ...]) -> None:
        self.buckets = buckets
        self.counts = [0] * len(buckets)
        self.total = 0.0
        self.n = 0

    def observe(self, value: float) -> None:
        for i, bound in enumerate(self.buckets):
            if value <= bound:
                self.counts[i] += 1
        self.total += value
        self.n += 1

    def lines(self, name: str, labels: Labels) -> Iterable[str]:
        for bound, count in zip(self.buckets, self.counts, strict=True):
            yield f"{name}_bucket{_labels((*labels, ('le', repr(bound))))} {count}"
        yield f"{name}_bucket{_labels((*labels, ('le', '+Inf')))} {self.n}"
        yield f"{name}_sum{_labels(labels)} {self.total}"
        yield f"{name}_count{_labels(labels)} {self.n}"


@dataclass(frozen=True)
class ModelGauges:
    """One loaded model's slots (from the scheduler) and engine counters."""

    model_id: str
    slots_busy: int
    slots_total: int
    stats: EngineStats = field(default_factory=EngineStats)

    @property
    def tokens_per_step(self) -> float:
        """Tokens each generation decode carried on average: the batching achieved."""
        steps = self.stats.decode_steps
        return self.stats.tokens_decoded / steps if steps else 0.0


@dataclass(frozen=True)
class Gauges:
    """Live values read when /metrics is scraped."""

    queue_depth: int
    busy: bool
    loaded_models: list[str]
    models: tuple[ModelGauges, ...] = ()

    def within(self, allowed: Sequence[str] | None) -> Gauges:
        """These gauges for ``allowed`` models only (None: all); a scoped key's view."""
        if allowed is None:
            return self
        return replace(
            self,
            loaded_models=[m for m in self.loaded_models if m in allowed],
            models=tuple(m for m in self.models if m.model_id in allowed),
        )


def gauges_from(scheduler: Scheduler) -> Gauges:
    """Read the scheduler's queue, slots and each loaded engine's counters now."""
    loaded = scheduler.loaded(counters=True)
    return Gauges(
        scheduler.queue_depth,
        scheduler.busy,
        [m.model_id for m in loaded],
        tuple(
            ModelGauges(m.model_id, m.slots_busy, m.slots_total, m.stats or EngineStats())
            for m in loaded
        ),
    )


def _model_lines(models: tuple[ModelGauges, ...]) -> list[str]:
    """Slots, prompt cache and batching per loaded model, in Prometheus text."""
    out: list[str] = []

    def family(name: str, kind: str, help_: str, values: list[tuple[Labels, float | int]]) -> None:
        out.extend([f"# HELP {name} {help_}", f"# TYPE {name} {kind}"])
        out.extend(f"{name}{_labels(k)} {v}" for k, v in values)

    def per_model(get: Callable[[ModelGauges], float | int]) -> list[tuple[Labels, float | int]]:
        return [((("model", m.model_id),), get(m)) for m in models]

    family(
        "edgedesk_slots_busy",
        "gauge",
        "Generation slots streaming now.",
        per_model(lambda m: m.slots_busy),
    )
    family(
        "edgedesk_slots_total",
        "gauge",
        "Generation slots of the loaded model.",
        per_model(lambda m: m.slots_total),
    )
    family(
        "edgedesk_prompt_tokens_total",
        "counter",
        "Prompt tokens served from a slot's kept prefix (cached) or decoded (processed).",
        [
            v
            for m in models
            for v in (
                ((("model", m.model_id), ("source", "cached")), m.stats.prompt_tokens_cached),
                ((("model", m.model_id), ("source", "processed")), m.stats.prompt_tokens_processed),
            )
        ],
    )
    family(
        "edgedesk_decode_steps_total",
        "counter",
        "llama_decode calls for generation.",
        per_model(lambda m: m.stats.decode_steps),
    )
    family(
        "edgedesk_decoded_tokens_total",
        "counter",
        "Tokens those decode calls carried.",
        per_model(lambda m: m.stats.tokens_decoded),
    )
    family(
        "edgedesk_tokens_per_decode_step",
        "gauge",
        "Average tokens per generation decode since load (batching across slots).",
        per_model(lambda m: round(m.tokens_per_step, 3)),
    )
    family(
        "edgedesk_embed_decodes_total",
        "counter",
        "Decode calls for embeddings and rerank (shared by concurrent clients).",
        per_model(lambda m: m.stats.embed_decodes),
    )
    return out


class Metrics:
    """Counters and histograms of one server; thread-safe; rendered as Prometheus text."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests: dict[Labels, int] = {}
        self.latency: dict[Labels, _Histogram] = {}
        self.ttft: dict[Labels, _Histogram] = {}
        self.tokens: dict[Labels, int] = {}
        self.cache: dict[Labels, int] = {}

    def record(
        self,
        route: str,
        status: int,
        latency_s: float,
        ttft_s: float | None,
        *,
        tokens_in: int,
        tokens_out: int,
    ) -> None:
        """Count one finished request."""
        with self._lock:
            key = (("route", route), ("status", str(status)))
            self.requests[key] = self.requests.get(key, 0) + 1
            self.latency.setdefault((("route", route),), _Histogram(LATENCY_BUCKETS)).observe(
                latency_s
            )
            if ttft_s is not None:
                self.ttft.setdefault((("route", route),), _Histogram(TTFT_BUCKETS)).observe(ttft_s)
            for direction, n in (("in", tokens_in), ("out", tokens_out)):
                if n:
                    k = (("direction", direction),)
                    self.tokens[k] = self.tokens.get(k, 0) + n

    def cache_event(self, cache: str, hit: bool) -> None:
        """Count a cache lookup."""
        with self._lock:
            key = (("cache", cache), ("result", "hit" if hit else "miss"))
            self.cache[key] = self.cache.get(key, 0) + 1

    def render(self, gauges: Gauges) -> str:
        """The Prometheus text exposition."""
        out: list[str] = []

        def counter(name: str, help_: str, values: dict[Labels, int]) -> None:
            out.extend([f"# HELP {name} {help_}", f"# TYPE {name} counter"])
            out.extend(f"{name}{_labels(k)} {v}" for k, v in sorted(values.items()))

        def histogram(name: str, help_: str, values: dict[Labels, _Histogram]) -> None:
            out.extend([f"# HELP {name} {help_}", f"# TYPE {name} histogram"])
            for k, h in sorted(values.items()):
                out.extend(h.lines(name, k))

        with self._lock:
            counter("edgedesk_requests_total", "HTTP requests by route and status.", self.requests)
            histogram("edgedesk_request_latency_seconds", "Total request latency.", self.latency)
            histogram("edgedesk_time_to_first_token_seconds", "Time to the first token.", self.ttft)
            counter("edgedesk_tokens_total", "Prompt (in) and generated (out) tokens.", self.tokens)
            counter(
                "edgedesk_cache_lookups_total", "Response and embedding cache lookups.", self.cache
            )
        out += [
            "# HELP edgedesk_queue_depth Requests waiting for the engine.",
            "# TYPE edgedesk_queue_depth gauge",
            f"edgedesk_queue_depth {gauges.queue_depth}",
            "# HELP edgedesk_busy Whether a request is running.",
            "# TYPE edgedesk_busy gauge",
            f"edgedesk_busy {int(gauges.busy)}",
            "# HELP edgedesk_loaded_models Models in memory.",
            "# TYPE edgedesk_loaded_models gauge",
            f"edgedesk_loaded_models {len(gauges.loaded_models)}",
            "# HELP edgedesk_model_loaded A model in memory (1 per model).",
            "# TYPE edgedesk_model_loaded gauge",
        ]
        out += [f"edgedesk_model_loaded{_labels((('model', m),))} 1" for m in gauges.loaded_models]
        out += _model_lines(gauges.models)
        return "\n".join(out) + "\n"

    def snapshot(self, gauges: Gauges) -> dict[str, object]:
        """The same figures as one JSON document (``/metrics?format=json``)."""
        with self._lock:
            requests = [{**dict(k), "count": v} for k, v in sorted(self.requests.items())]
            tokens = {dict(k)["direction"]: v for k, v in self.tokens.items()}
        return {
            "queue_depth": gauges.queue_depth,
            "busy": gauges.busy,
            "requests": requests,
            "tokens": tokens,
            "models": [
                {
                    "model": m.model_id,
                    "slots_busy": m.slots_busy,
                    "slots_total": m.slots_total,
                    "prompt_tokens_cached": m.stats.prompt_tokens_cached,
                    "prompt_tokens_processed": m.stats.prompt_tokens_processed,
                    "decode_steps": m.stats.decode_steps,
                    "tokens_decoded": m.stats.tokens_decoded,
                    "tokens_per_decode_step": round(m.tokens_per_step, 3),
                    "embed_decodes": m.stats.embed_decodes,
                }
                for m in gauges.models
            ],
        }


@dataclass
class AccessRecord:
    """One request as the access log sees it: no prompt, no completion, no key."""

    time: str
    request_id: str
    key_name: str | None
    method: str
    route: str
    status: int
    model: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    ttft_ms: float | None = None
    latency_ms: float = 0.0
    client: str | None = None
    # A streamed answer that failed after its status (200) went out: the error's message.
    error: str | None = None
    # Any refusal or failure: its error code and type (``context_length_exceeded``…).
    error_code: str | None = None
    error_type: str | None = None
    dropped_tools: list[str] | None = None  # tool types left out of the prompt

    def line(self) -> str:
        """The record as one JSON line."""
        return json.dumps(asdict(self), ensure_ascii=False, sort_keys=True)

    def summary(self) -> str:
        """One short line for the console (``serve --log-level info``): no content.

        Every field a client chose (the model's name, the path, the request id) is shown
        with control and format characters escaped (``log_field``): a newline in
        ``model`` cannot start a forged line of its own, nor an escape sequence recolour
        the terminal.
        """
        parts = [
            log_field(self.request_id),
            log_field(self.method),
            log_field(self.route),
            f"model={log_field(self.model or '-')}",
            f"status={self.status}",
            f"tokens={self.tokens_in}+{self.tokens_out}",
            f"{self.latency_ms:.0f}ms",
        ]
        if self.error_code:
            parts.append(f"error={log_field(self.error_code)}")
        if self.dropped_tools:
            parts.append(f"dropped={log_field(','.join(self.dropped_tools))}")
        return " ".join(parts)


Subscriber = Callable[[AccessRecord], None]

# Line breaks and separators, other control characters, and format characters (bidi
# overrides, zero-width ones) that could make a console line read as something else.
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


def log_field(text: str) -> str:
    """``text`` safe inside one console log line: spaces stay, a backslash is doubled,
    and each control or format character is written as its ``\\xNN``/``\\uNNNN`` escape."""
    if text.isprintable() and "\\" not in text:
        return text
    out = []
    for char in text:
        if char == "\\":
            out.append("\\\\")
        elif unicodedata.category(char) in _UNSAFE_CATEGORIES:
            code = ord(char)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(char)
    return "".join(out)


class AccessLog:
    """Writes access records to the logger and a file, and tells subscribers (the GUI)."""

    def __init__(self, path: Path | None, logger: logging.Logger | None = None) -> None:
        self.path = path
        self.logger = logger or logging.getLogger("edgedesk.access")
        self._subscribers: list[Subscriber] = []
        self._lock = threading.Lock()

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Call ``callback`` with every record (on a server thread); returns an unsubscribe."""
        with self._lock:
            self._subscribers.append(callback)

        def unsubscribe() -> None:
            with self._lock:
                if callback in self._subscribers:
                    self._subscribers.remove(callback)

        return unsubscribe

    def write(self, record: AccessRecord) -> None:
        """Log one request; a failing subscriber or disk never fails the request."""
        line = record.line()
        self.logger.info(record.summary())
        with self._lock:
            subscribers = list(self._subscribers)
            if self.path is not None:
                try:
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                    with self.path.open("a", encoding="utf-8") as handle:
                        handle.write(line + "\n")
                except OSError as exc:
                    self.logger.warning("cannot write access log %s: %s", self.path, exc)
        for callback in subscribers:
            try:
                callback(record)
            except Exception:  # a broken listener must not break serving
                self.logger.exception("access log subscriber failed")


def now_iso() -> str:
    """The current UTC time for log records."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")
