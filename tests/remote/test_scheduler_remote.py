"""A remote model uses no memory here: it never pushes a local model out."""

from __future__ import annotations

from pathlib import Path

from desktop.app import build_context
from desktop.config import NoPolicy
from desktop.engine.types import GenerationParams, Message
from desktop.remote.registry import keyring_set
from tests.remote.fake_openai import Fake

PARAMS = GenerationParams(max_tokens=4, temperature=0.0)


def test_a_local_model_stays_loaded_while_a_remote_model_is_used(
    fake: Fake, tiny_chat: Path
) -> None:
    ctx = build_context(policy=NoPolicy(), cli_settings={"engine.max_loaded_models": 1})
    try:
        ctx.remote_registry.add("gpu", fake.url)
        keyring_set("gpu", "sk-remote")
        ctx.resolver.register(tiny_chat)
        list(ctx.scheduler.stream_chat("tiny-chat", [Message("user", "hi")], PARAMS))
        answer = "".join(
            c.text
            for c in ctx.scheduler.stream_chat("gpu/echo", [Message("user", "from afar")], PARAMS)
        )
        assert answer == "from afar "
        assert {m.model_id for m in ctx.scheduler.loaded()} == {"tiny-chat", "gpu/echo"}
        # Back to the local model: answered at once, without loading it again.
        again = list(ctx.scheduler.stream_chat("tiny-chat", [Message("user", "hi")], PARAMS))
        assert again[-1].timings is not None and again[-1].timings.load_s == 0
    finally:
        ctx.close()
