"""``edgedesk run MODEL PROMPT --image FILE``: the pictures reach the model with the
prompt, in order; a missing file, a file that is not a picture and a model that cannot
see are one-line errors before anything loads. A stand-in engine answers (what is
asserted is what the engine is handed, not what a model sees)."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.cli import main
from desktop.engine._types import (
    MEDIA_MARKER,
)
from tests.cli.eyes import Seen, watch
from tests.fixtures.pictures import png
from tests.fixtures.vision import write_header_projector

RED, BLUE = png(2, 2, rgb=(255, 0, 0)), png(2, 2, rgb=(0, 0, 255))


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> Seen:
    return watch(monkeypatch)


@pytest.fixture
def pictures(tmp_path: Path) -> tuple[Path, Path]:
    red, blue = tmp_path / "red.png", tmp_path / "blue.png"
    red.write_bytes(RED)
    blue.write_bytes(BLUE)
    return red, blue


def test_images_go_with_the_prompt_in_order(
    tiny_chat: Path,
    tmp_path: Path,
    pictures: tuple[Path, Path],
    seen: Seen,
    capsys: pytest.CaptureFixture[str],
) -> None:
    projector = write_header_projector(tmp_path / "mmproj.gguf")
    assert main(["models", "import", str(tiny_chat), "--mmproj", str(projector)]) == 0
    red, blue = pictures
    assert (
        main(
            [
                "run",
                "tiny-chat",
                "What is in this picture?",
                "--image",
                str(red),
                "--image",
                str(blue),
            ]
        )
        == 0
    )
    assert capsys.readouterr().out.endswith("A red square.\n")
    [(spec, messages)] = seen
    assert spec.local is not None and spec.local.projector == projector
    [message] = messages
    assert message.content == f"{MEDIA_MARKER}\n{MEDIA_MARKER}\nWhat is in this picture?"
    assert [i.data for i in message.images] == [RED, BLUE]
    assert [i.mime for i in message.images] == ["image/png", "image/png"]


def test_bad_pictures_and_blind_models_are_one_line_errors(
    tiny_chat: Path,
    tmp_path: Path,
    pictures: tuple[Path, Path],
    seen: Seen,
    capsys: pytest.CaptureFixture[str],
) -> None:
    zipped = tmp_path / "photo.png"
    zipped.write_bytes(b"PK\x03\x04" + bytes(100))
    red = str(pictures[0])
    for argv, says in (
        (["--image", str(tmp_path / "nope.png")], "nope.png: no such file"),
        (["--image", str(tmp_path)], "(it is a folder)"),
        (["--image", str(zipped)], "photo.png: the image is a ZIP archive"),
        (["--image", red, "--raw"], "--image needs the chat template"),
        (["--image", red], f"the model '{tiny_chat}' cannot see images"),
    ):
        assert main(["run", str(tiny_chat), "What is this?", *argv]) == 2, says
        err = capsys.readouterr().err
        assert says in err and "Traceback" not in err
    assert seen == []  # nothing reached a model
