"""``edgedesk run MODEL PROMPT --image FILE``: the pictures reach the model with the
prompt, in order; a missing file, a file that is not a picture and a model that cannot
see are one-line errors before anything loads. A stand-in engine answers (what is
asserted is what the engine is handed, not what a model sees)."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from desktop.app import AppContext
from desktop.cli import main
from desktop.engine.types import (
    MEDIA_MARKER,
    Chunk,
    EngineStats,
    GenerationParams,
    LoadReport,
    Message,
    ModelSpec,
    Usage,
)
from tests.fixtures.vision import png_bytes, write_header_projector

RED, BLUE = png_bytes(rgb=(255, 0, 0)), png_bytes(rgb=(0, 0, 255))


class Eyes:
    """A loaded "model" that keeps what it was asked and answers one fixed sentence."""

    parallel = 1

    def __init__(self, spec: ModelSpec, seen: list[tuple[ModelSpec, list[Message]]]) -> None:
        self.spec, self.seen = spec, seen
        self.report = LoadReport(spec.model_id, spec.path, 2048, 0, False, 0.0, 0, "gguf")
        self.stats = EngineStats()

    def stream_chat(self, messages: Sequence[Message], params: GenerationParams,
                    cancel: threading.Event | None = None, tools: Any = None,
                    template_kwargs: Any = None) -> Iterator[Chunk]:
        self.seen.append((self.spec, list(messages)))
        yield Chunk(text="A red square.")
        yield Chunk(finish_reason="stop", usage=Usage(5, 3))

    def close(self) -> None:
        pass


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> list[tuple[ModelSpec, list[Message]]]:
    seen: list[tuple[ModelSpec, list[Message]]] = []
    monkeypatch.setattr(AppContext, "load_model", lambda _ctx, spec: Eyes(spec, seen))
    return seen


@pytest.fixture
def pictures(tmp_path: Path) -> tuple[Path, Path]:
    red, blue = tmp_path / "red.png", tmp_path / "blue.png"
    red.write_bytes(RED)
    blue.write_bytes(BLUE)
    return red, blue


def test_images_go_with_the_prompt_in_order(tiny_chat: Path, tmp_path: Path,
                                            pictures: tuple[Path, Path],
                                            seen: list[tuple[ModelSpec, list[Message]]],
                                            capsys: pytest.CaptureFixture[str]) -> None:
    projector = write_header_projector(tmp_path / "mmproj.gguf")
    assert main(["models", "import", str(tiny_chat), "--mmproj", str(projector)]) == 0
    red, blue = pictures
    assert main(["run", "tiny-chat", "What is in this picture?", "--image", str(red),
                 "--image", str(blue)]) == 0
    assert capsys.readouterr().out.endswith("A red square.\n")
    [(spec, messages)] = seen
    assert spec.local is not None and spec.local.projector == projector
    [message] = messages
    assert message.content == f"{MEDIA_MARKER}\n{MEDIA_MARKER}\nWhat is in this picture?"
    assert [i.data for i in message.images] == [RED, BLUE]
    assert [i.mime for i in message.images] == ["image/png", "image/png"]


def test_bad_pictures_and_blind_models_are_one_line_errors(
        tiny_chat: Path, tmp_path: Path, pictures: tuple[Path, Path],
        seen: list[tuple[ModelSpec, list[Message]]],
        capsys: pytest.CaptureFixture[str]) -> None:
    zipped = tmp_path / "photo.png"
    zipped.write_bytes(b"PK\x03\x04" + bytes(100))
    red = str(pictures[0])
    for argv, says in (
            (["--image", str(tmp_path / "nope.png")], "nope.png: no such file"),
            (["--image", str(tmp_path)], "(it is a folder)"),
            (["--image", str(zipped)], "photo.png: the image is a ZIP archive"),
            (["--image", red, "--raw"], "--image needs the chat template"),
            (["--image", red], f"the model '{tiny_chat}' cannot see images")):
        assert main(["run", str(tiny_chat), "What is this?", *argv]) == 2, says
        err = capsys.readouterr().err
        assert says in err and "Traceback" not in err
    assert seen == []  # nothing reached a model
