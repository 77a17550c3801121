"""What indexing needs from an embedding model, and the Scheduler-backed one the app uses."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from desktop.engine import Engine

T = TypeVar("T")


class Embedder(Protocol):
    """An embedding model: vectors and token counts for many texts per call."""

    model: str

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit vectors, one per text."""
        ...

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """The model's token count of each text."""
        ...


class _EngineScheduler(Protocol):
    def embed(self, model: str, texts: Sequence[str]) -> list[list[float]]: ...
    def with_engine(self, model: str, work: Callable[[Engine], T]) -> T: ...


@dataclass
class SchedulerEmbedder:
    """An Embedder backed by the app's Scheduler (the model is loaded on first use)."""

    scheduler: _EngineScheduler
    model: str

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit vectors from the engine, batched in one scheduler turn."""
        return self.scheduler.embed(self.model, texts)

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Token counts with the model's own tokenizer, in one scheduler turn."""

        def work(engine: Engine) -> list[int]:
            return [len(engine.tokenize(t, add_bos=False, special=False)) for t in texts]

        return self.scheduler.with_engine(self.model, work)
