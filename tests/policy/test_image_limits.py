"""The ImageMaxMB / ImageMaxMegapixels policy: one set of picture caps, built by the
composition root, that the API, ``edgedesk run --image``, ``edgedesk chat``'s ``/image``
and the chat core (the window's) all enforce. The picture here (1000 x 1100 pixels, a
few KiB) passes the default caps and is over a 1-megapixel policy."""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from desktop.base.config import Paths, load_settings
from desktop.base.errors import ImageRejected
from desktop.chat import ChatCore, Conversation
from desktop.chat import _attachments as attachments
from desktop.cli import main
from desktop.engine._images import DEFAULT_LIMITS, HARD_LIMITS, MIB, ImageLimits
from desktop.engine._types import (
    ChatCall,
    Delta,
    EngineStats,
    LoadReport,
    Message,
    ModelSpec,
    Usage,
)
from desktop.policy import KEYS, load_machine_policy
from desktop.root.context import AppContext, build_context
from tests.chat.scripted import Scripted
from tests.fixtures.pictures import png
from tests.fixtures.vision import data_url, write_header_projector

WIDE = png(1000, 1100)  # 1.1 megapixels
CAPPED = {"ImageMaxMegapixels": 1}


class Eyes:
    """A loaded "model" that keeps what it was handed and answers one sentence."""

    parallel = 1

    def __init__(self, spec: ModelSpec, seen: list[list[Message]]) -> None:
        self.seen = seen
        self.report = LoadReport(spec.model_id, spec.path, 2048, 0, False, 0.0, 0, "gguf")

    def stats(self) -> EngineStats:
        return EngineStats()

    def stream_chat(self, call: ChatCall, cancel: threading.Event | None = None) -> Iterator[Delta]:
        self.seen.append(list(call.messages))
        yield Delta(text="A wide picture.")
        yield Delta(finish_reason="stop", usage=Usage(5, 3))

    def close(self) -> None:
        pass


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> list[list[Message]]:
    seen: list[list[Message]] = []
    monkeypatch.setattr(AppContext, "load_model", lambda _ctx, spec: Eyes(spec, seen))
    return seen


@pytest.fixture
def policy_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Linux policy root every context of the test reads (empty until written)."""
    root = tmp_path / "root"
    monkeypatch.setattr(
        "desktop.root.context.load_machine_policy", lambda: load_machine_policy(root, "linux")
    )
    return root


def _install(root: Path, policy: dict[str, Any]) -> None:
    target = root / "etc" / "edgedesk" / "policy.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(policy))


@pytest.fixture
def vision_model(tiny_chat: Path, tmp_path: Path) -> str:
    projector = write_header_projector(tmp_path / "mmproj.gguf")
    assert main(["models", "import", str(tiny_chat), "--mmproj", str(projector)]) == 0
    return "tiny-chat"


def test_the_caps_follow_settings_and_policy_and_never_pass_the_engines(
    tmp_path: Path, policy_root: Path
) -> None:
    assert build_context().image_limits == DEFAULT_LIMITS
    _install(policy_root, {"ImageMaxMB": 5, "ImageMaxMegapixels": 12})
    ctx = build_context()
    assert ctx.image_limits == ImageLimits(max_bytes=5 * MIB, max_pixels=12_000_000)
    assert ctx.effective.is_locked("image_max_mb") and ctx.effective.is_locked(
        "image_max_megapixels"
    )
    ctx.close()
    # The schema's ceilings are the engine's own: a policy cannot lift a cap past them.
    by_name = {key.name: key for key in KEYS}
    assert by_name["ImageMaxMB"].maximum * MIB == HARD_LIMITS.max_bytes  # type: ignore[operator]
    assert by_name["ImageMaxMegapixels"].maximum * 1_000_000 == HARD_LIMITS.max_pixels  # type: ignore[operator]
    _install(policy_root, {"ImageMaxMB": 65})
    paths = Paths.from_env()
    eff = load_settings(paths, environ={}, policy=load_machine_policy(policy_root, "linux"))
    assert eff.settings.image_max_mb == DEFAULT_LIMITS.max_bytes // MIB  # fails closed:
    # an invalid policy is refused as a whole, never half-applied with a bigger cap.


def _served(ctx: AppContext) -> Any:
    settings = ctx.settings.server.model_copy(update={"port": 0, "require_key": False})
    runner = ctx.new_api_server(settings=settings)
    runner.start()
    return runner


def test_the_api_refuses_a_picture_over_the_policy_cap_with_a_clear_400(
    vision_model: str, policy_root: Path, seen: list[list[Message]]
) -> None:
    question = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is this?"},
                {"type": "image_url", "image_url": {"url": data_url(WIDE)}},
            ],
        }
    ]
    for policy in ({}, CAPPED):
        _install(policy_root, policy)
        ctx = build_context()
        runner = _served(ctx)
        try:
            with openai.OpenAI(base_url=runner.url, api_key="none", max_retries=0) as client:
                if not policy:  # the default caps take it; the listing says it sees
                    card = next(
                        m
                        for m in client.models.list().model_dump()["data"]
                        if m["id"] == vision_model
                    )
                    assert "vision" in card["capabilities"]
                    answer = client.chat.completions.create(model=vision_model, messages=question)  # type: ignore[arg-type]
                    assert answer.choices[0].message.content == "A wide picture."
                    continue
                with pytest.raises(openai.BadRequestError) as refused:
                    client.chat.completions.create(model=vision_model, messages=question)  # type: ignore[arg-type]
        finally:
            runner.stop()
            ctx.close()
    body = refused.value.body
    assert "1000 x 1100 pixels" in body["message"] and "at most 1 megapixels" in body["message"]
    assert body["code"] == "invalid_image"
    assert body["param"] == "messages.0.content.1.image_url"
    assert len(seen) == 1  # the refused one never reached the model


def test_run_image_is_refused_over_the_policy_cap(
    vision_model: str,
    policy_root: Path,
    tmp_path: Path,
    seen: list[list[Message]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    picture = tmp_path / "wide.png"
    picture.write_bytes(WIDE)
    argv = ["run", vision_model, "What is this?", "--image", str(picture)]
    assert main(argv) == 0 and len(seen) == 1
    capsys.readouterr()
    _install(policy_root, CAPPED)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "wide.png: the image is 1000 x 1100 pixels" in err
    assert "at most 1 megapixels" in err and "Traceback" not in err
    assert len(seen) == 1


def test_chat_image_and_the_chat_core_refuse_over_the_policy_cap(
    vision_model: str,
    policy_root: Path,
    tmp_path: Path,
    seen: list[list[Message]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    picture = tmp_path / "wide.png"
    picture.write_bytes(WIDE)
    _install(policy_root, CAPPED)
    monkeypatch.setattr("sys.stdin", io.StringIO(f"/image {picture}\nhi\n"))
    assert main(["chat", vision_model, "--ephemeral"]) == 0
    err = capsys.readouterr().err
    assert "at most 1 megapixels" in err and "goes with your next message" not in err
    assert len(seen) == 1 and seen[0][-1].images == ()  # the chat went on, without it

    # The window's core: an attachment taken under the default caps (a paste, a file
    # dropped before the policy changed) is refused at send, before anything changes.
    ctx = build_context()
    streamer = Scripted("never")
    core = ChatCore(streamer, sees=lambda _model: True, image_limits=ctx.image_limits)
    ctx.close()
    chat = Conversation(model=vision_model)
    with pytest.raises(ImageRejected) as refused:
        core.ask(chat, "look", attachments=[attachments.from_bytes("pasted.png", WIDE)])
    assert "pasted.png is 1000 x 1100 pixels" in refused.value.message
    assert chat.turns == [] and streamer.prompts == []
