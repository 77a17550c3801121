"""``edgedesk chat``'s ``/image PATH``: the picture goes with the next message to a model
that sees; a missing file, a document and a text-only model are one-line errors that
leave the chat going. A stand-in engine answers (what is asserted is what the engine is
handed, not what a model sees)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from desktop.cli import main
from tests.cli.eyes import Seen, watch
from tests.fixtures.pictures import png
from tests.fixtures.vision import write_header_projector

RED, BLUE = png(rgb=(255, 0, 0)), png(rgb=(0, 0, 255))


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> Seen:
    return watch(monkeypatch)


def _chat(monkeypatch: pytest.MonkeyPatch, script: str, model: str) -> int:
    monkeypatch.setattr("sys.stdin", io.StringIO(script))
    return main(["chat", model, "--ephemeral"])


def test_a_picture_goes_with_the_next_message(
    monkeypatch: pytest.MonkeyPatch,
    tiny_chat: Path,
    tmp_path: Path,
    seen: Seen,
    capsys: pytest.CaptureFixture[str],
) -> None:
    projector = write_header_projector(tmp_path / "mmproj.gguf")
    assert main(["models", "import", str(tiny_chat), "--mmproj", str(projector)]) == 0
    (tmp_path / "red.png").write_bytes(RED)
    (tmp_path / "blue.png").write_bytes(BLUE)
    (tmp_path / "notes.txt").write_text("hello")
    script = (
        f"/image {tmp_path / 'red.png'}\n/image {tmp_path / 'notes.txt'}\n"
        f"/image {tmp_path / 'blue.png'}\n/image\nWhich is red?\nAnd now?\n"
    )
    assert _chat(monkeypatch, script, "tiny-chat") == 0
    err = capsys.readouterr().err
    assert "(red.png goes with your next message)" in err
    assert "notes.txt: not a picture" in err
    assert "(attached to your next message: red.png, blue.png)" in err
    (_, first), (_, second) = seen
    assert [i.data for i in first[-1].images] == [RED, BLUE]
    assert "Which is red?" in first[-1].content
    # The pictures went with one message: the next question brings none of its own, and
    # the earlier ones stay with the question they were asked with.
    assert second[-1].images == () and second[-1].content == "And now?"
    assert [i.data for m in second for i in m.images] == [RED, BLUE]


def test_wrong_files_and_blind_models_are_errors_the_chat_survives(
    monkeypatch: pytest.MonkeyPatch,
    tiny_chat: Path,
    tmp_path: Path,
    seen: Seen,
    capsys: pytest.CaptureFixture[str],
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    picture = tmp_path / "red.png"
    picture.write_bytes(RED)
    script = f"/image {tmp_path / 'nope.png'}\n/image {notes}\n/image {picture}\nhi\n"
    assert _chat(monkeypatch, script, str(tiny_chat)) == 0
    err = capsys.readouterr().err
    assert "nope.png: no such file" in err
    assert "cannot see pictures" in err and "Traceback" not in err
    # The text-only model is refused before the file is read; the chat goes on.
    assert len(seen) == 1 and seen[0][1][-1].images == ()
