"""The engine protocol a loaded model implements, and the scheduler's record of one.

The scheduler and the API routes need only this from a loaded model. Local llama.cpp
engines (``engine._llama``) and remote ones (``remote.engine``) implement it;
callers type against it so they never depend on which one they hold.

Threads: an implementation's methods are thread-safe (see each engine's docstring).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from desktop.engine._types import ChatCall, Delta, EngineStats, GenerationParams, LoadReport


class Engine(Protocol):
    """What the scheduler needs from a loaded model; its methods are thread-safe."""

    report: LoadReport

    @property
    def parallel(self) -> int:
        """How many generation streams the engine runs at once (its slots)."""
        ...

    def stats(self) -> EngineStats:
        """Counters since load: slots busy, prompt tokens cached, decode steps."""
        ...

    def stream_chat(self, call: ChatCall, cancel: threading.Event | None = None) -> Iterator[Delta]:
        """Stream an answer to a chat call: thinking, text and the tool calls it made.

        Refusals raise before the first delta; the first may be ``_types.ADMITTED``,
        which says the request passed them before its prompt is read (``Delta``). Tool
        calls arrive parsed, in ``Delta.tool_calls``: their markup never reaches ``text``."""
        ...

    def stream_completion(
        self, prompt: str, params: GenerationParams, cancel: threading.Event | None = None
    ) -> Iterator[Delta]:
        """Stream a plain continuation."""
        ...

    def stream_infill(
        self,
        prefix: str,
        suffix: str,
        params: GenerationParams,
        cancel: threading.Event | None = None,
    ) -> Iterator[Delta]:
        """Stream fill-in-the-middle text (raises InvalidRequest without FIM tokens)."""
        ...

    def embed(
        self, texts: Sequence[str | list[int]], cancel: threading.Event | None = None
    ) -> list[list[float]]:
        """Normalised embeddings of texts or token ids (embedded as given, InvalidRequest
        for ids outside the vocabulary); ``cancel`` set stops the work (Cancelled)."""
        ...

    def tokenize(self, text: str, *, add_bos: bool = True, special: bool = True) -> list[int]:
        """The model's own tokens for ``text``."""
        ...

    def rerank(
        self, query: str, documents: Sequence[str], cancel: threading.Event | None = None
    ) -> list[float]:
        """Relevance scores of ``documents`` for ``query``; ``cancel`` as for ``embed``."""
        ...

    def embed_counted(
        self, texts: Sequence[str | list[int]], cancel: threading.Event | None = None
    ) -> tuple[list[list[float]], int | None]:
        """``embed``, plus the prompt tokens the engine counted itself (None: not counted)."""
        ...

    def detokenize(self, tokens: Sequence[int]) -> str:
        """Text for token ids (InvalidRequest for ids it cannot take)."""
        ...

    def render(self, call: ChatCall) -> str:
        """The prompt text for a conversation (InvalidRequest where no template is known)."""
        ...

    def prompt_tokens(self, prompt: str) -> list[int]:
        """Tokens of a rendered prompt (BOS added only if the template did not)."""
        ...

    def close(self) -> None:
        """Free memory (called only when no request uses the engine)."""
        ...


@dataclass(frozen=True)
class LoadedModel:
    """A model currently in memory, for status displays and /metrics."""

    model_id: str
    report: LoadReport
    idle_s: float
    requests: int
    slots_busy: int = 0
    slots_total: int = 1
    in_use: int = 0
    stats: EngineStats | None = None
    peak_slots_busy: int = 0  # since load
