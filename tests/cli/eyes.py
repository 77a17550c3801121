"""A stand-in for a model that sees, for the CLI's picture tests: it keeps what it was
handed and answers one fixed sentence (what is asserted is what reached the engine)."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from desktop.engine._types import (
    ChatCall,
    Delta,
    EngineStats,
    LoadReport,
    Message,
    ModelSpec,
    Usage,
)
from desktop.root.context import AppContext

Seen = list[tuple[ModelSpec, list[Message]]]


class Eyes:
    """A loaded "model" that keeps what it was asked and answers one fixed sentence."""

    parallel = 1

    def __init__(self, spec: ModelSpec, seen: Seen) -> None:
        self.spec, self.seen = spec, seen
        self.report = LoadReport(spec.model_id, spec.path, 2048, 0, False, 0.0, 0, "gguf")
        self.stats = EngineStats()

    def stream_chat(self, call: ChatCall, cancel: threading.Event | None = None) -> Iterator[Delta]:
        self.seen.append((self.spec, list(call.messages)))
        yield Delta(text="A red square.")
        yield Delta(finish_reason="stop", usage=Usage(5, 3))

    def close(self) -> None:
        pass


def watch(monkeypatch: pytest.MonkeyPatch) -> Seen:
    """Every model the app loads is an ``Eyes``; returns what they are handed, in order."""
    seen: Seen = []
    monkeypatch.setattr(AppContext, "load_model", lambda _ctx, spec: Eyes(spec, seen))
    return seen
