"""A request's context length (a chat's setting) loads the model with that context."""

from __future__ import annotations

from pathlib import Path

from desktop.engine._scheduler import Scheduler
from desktop.engine._types import ChatCall, GenerationParams, LocalPlan, Message, ModelSpec
from tests.engine.test_scheduler import FakeEngine


def test_a_different_context_reloads_the_model_and_none_keeps_the_fitted_one() -> None:
    asked: list[int | None] = []

    def resolve(ref: str, *, context_length: int | None = None) -> ModelSpec:
        asked.append(context_length)
        return ModelSpec(
            Path(f"/{ref}.gguf"),
            ref,
            context_length=context_length or 2048,
            plan=LocalPlan(estimated_bytes=100),
        )

    loaded: list[FakeEngine] = []

    def load(spec: ModelSpec) -> FakeEngine:
        loaded.append(FakeEngine(spec))
        return loaded[-1]

    scheduler = Scheduler(load, resolve)

    def ask(context: int | None) -> None:
        params = GenerationParams(max_tokens=4, context_length=context)
        list(scheduler.stream_chat("m", ChatCall.of([Message("user", "hi")], params)))

    ask(None)
    ask(None)
    assert asked == [None, None] and [e.spec.context_length for e in loaded] == [2048]
    ask(8192)
    assert asked[-1] == 8192
    assert [e.spec.context_length for e in loaded] == [2048, 8192]
    assert loaded[0].closed  # the old one made room
    ask(8192)
    assert len(loaded) == 2  # same context: the loaded model serves it
