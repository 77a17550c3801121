"""Downloading a catalog model from the Models screen: progress, pause, resume, cancel."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from desktop.base.config import NoPolicy
from desktop.catalog._download import Progress
from desktop.root.context import AppContext, build_context
from desktop.ui.models.view import ModelsView
from desktop.ui.shell.main_window import MainWindow
from tests.fixtures.fake_hub import FakeHub, Fault
from tests.ui.conftest import CAT_FILE, CAT_ID, CAT_REPO, wait_listed

pytestmark = pytest.mark.qt


def test_download_shows_progress_pauses_resumes_and_installs(
    qtbot, hub: FakeHub, tiny_chat: Path
) -> None:
    size = len(tiny_chat.read_bytes())
    hub.add_fault(CAT_REPO, CAT_FILE, Fault("throttle", bytes_per_s=size // 4, times=1))
    win, ctx = _window(qtbot)
    view = win.models
    seen: list[float] = []
    worker = view.download(CAT_ID)
    assert worker is not None
    worker.progress.connect(lambda _key, p: seen.append(p.done / p.total))
    # The lambda runs on the worker's thread; the view hears the same signal queued, so
    # wait on what the user sees rather than on ``seen``.
    qtbot.waitUntil(
        lambda: view.progress.isVisible() and "/s" in view.status.text(), timeout=10_000
    )
    # The worker may have said its first progress before the connect above (a loaded
    # machine runs it first): wait for one this test heard, still part way.
    qtbot.waitUntil(lambda: bool(seen), timeout=10_000)
    assert 0 < seen[0] < 1  # part way, not all at once
    with qtbot.waitSignal(worker.paused, timeout=10_000):
        view.pause(CAT_ID)
    row = next(
        n for n in range(view.table_model.rowCount()) if view.table_model.row_at(n).id == CAT_ID
    )
    # The view hears the worker's signal through its own queued connection.
    qtbot.waitUntil(lambda: view.table_model.index(row, 6).data() == "paused", timeout=5000)
    # What the part holds, not what the Hub sent: bytes still in the socket are lost.
    (part,) = _parts(ctx)
    kept = part.stat().st_size
    assert 0 < kept < size

    resumed = view.download(CAT_ID)
    assert resumed is not None and resumed is not worker
    qtbot.waitUntil(lambda: bool(view.table_model.row_at(row).installed), timeout=20_000)
    assert hub.downloads()[-1].range == f"bytes={kept}-"  # resumed, not restarted
    assert view.table_model.row_at(row).installed
    assert ("GLM-Edge 1.5B Chat", CAT_ID) in view.chat_models()
    assert win.chat.model_box.findData(CAT_ID) >= 0  # offered in the chat at once
    win.close()


def test_offline_mode_refuses_downloads_with_a_message(qtbot, hub: FakeHub) -> None:
    win = MainWindow(build_context(policy=NoPolicy(), cli_settings={"offline": True}))
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.models.error, timeout=2000) as error:
        assert win.models.download(CAT_ID) is None
    assert "offline" in error.args[0].lower()
    assert hub.downloads() == []
    win.close()


def _row(view: ModelsView) -> int:
    return next(
        n for n in range(view.table_model.rowCount()) if view.table_model.row_at(n).id == CAT_ID
    )


def _status(view: ModelsView) -> str:
    return str(view.table_model.index(_row(view), 6).data() or "")


def _parts(ctx: AppContext) -> list[Path]:
    return sorted(ctx.paths.models_dir.rglob("*.part"))


def _answer(monkeypatch: pytest.MonkeyPatch, button: QMessageBox.StandardButton) -> list[str]:
    """Answer the confirmation with ``button``; returns the questions asked."""
    asked: list[str] = []

    def question(_parent: object, _title: str, text: str, *_args: object) -> object:
        asked.append(text)
        return button

    monkeypatch.setattr(QMessageBox, "question", question)
    return asked


def _window(qtbot) -> tuple[MainWindow, AppContext]:
    ctx = build_context(policy=NoPolicy())
    win = MainWindow(ctx)
    qtbot.addWidget(win)
    win.show()
    win.show_page("models")
    wait_listed(qtbot, win)
    return win, ctx


def _throttled(qtbot, hub: FakeHub, model: Path) -> tuple[MainWindow, AppContext, int]:
    """The Models screen with the catalog model's row selected; its download is slow."""
    size = len(model.read_bytes())
    hub.add_fault(CAT_REPO, CAT_FILE, Fault("throttle", bytes_per_s=size // 4, times=1))
    win, ctx = _window(qtbot)
    win.models.table.selectRow(_row(win.models))
    return win, ctx, size


def test_cancel_stops_a_running_download_deletes_it_and_the_next_starts_at_zero(
    qtbot, hub: FakeHub, tiny_chat: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    win, ctx, size = _throttled(qtbot, hub, tiny_chat)
    view = win.models
    assert not view.cancel_button.isEnabled()  # nothing to cancel yet
    seen: list[float] = []
    worker = view.download(CAT_ID)
    assert worker is not None
    worker.progress.connect(lambda _key, p: seen.append(p.done / p.total))
    qtbot.waitUntil(view.progress.isVisible, timeout=10_000)  # the view heard it (queued)
    assert seen and 0 < seen[0] < 1
    assert view.cancel_button.isEnabled() and _parts(ctx)
    asked = _answer(monkeypatch, QMessageBox.StandardButton.Yes)

    with qtbot.waitSignal(worker.paused, timeout=10_000):
        qtbot.mouseClick(view.cancel_button, Qt.MouseButton.LeftButton)
        # A progress report the worker sent just before it stopped lands after the click.
        worker.progress.emit(CAT_ID, Progress(CAT_FILE, size // 2, size, 1e6, 1.0))
        assert _status(view) == "cancelling…"
        assert not view.cancel_button.isEnabled()
    assert asked and "GLM-Edge 1.5B Chat" in asked[0]
    qtbot.waitUntil(lambda: _status(view) == "cancelled", timeout=10_000)
    assert _parts(ctx) == []
    assert not (ctx.paths.models_dir / CAT_REPO).exists()  # no empty folder left either
    assert ctx.installed.all() == []
    assert not view.table_model.row_at(_row(view)).installed
    assert not view.progress.isVisible() and "Cancelled" in view.status.text()
    assert not view.cancel_button.isEnabled()

    requests = len(hub.downloads())
    again = view.download(CAT_ID)
    assert again is not None and again is not worker
    qtbot.waitUntil(lambda: bool(view.table_model.row_at(_row(view)).installed), timeout=20_000)
    assert [e.range for e in hub.downloads()[requests:]] == ["bytes=0-"]  # from byte 0
    assert hub.downloads()[-1].sent == size
    win.close()


def test_cancel_a_paused_download_deletes_its_part_without_restarting(
    qtbot, hub: FakeHub, tiny_chat: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    win, ctx, size = _throttled(qtbot, hub, tiny_chat)
    view = win.models
    worker = view.download(CAT_ID)
    assert worker is not None
    qtbot.waitUntil(lambda: bool(_parts(ctx)) and _parts(ctx)[0].stat().st_size > 0, timeout=10_000)
    with qtbot.waitSignal(worker.paused, timeout=10_000):
        view.pause(CAT_ID)
    qtbot.waitUntil(lambda: _status(view) == "paused", timeout=5000)
    (part,) = _parts(ctx)
    kept = part.stat().st_size
    assert 0 < kept < size  # pause keeps the bytes
    assert view.cancel_button.isEnabled()

    _answer(monkeypatch, QMessageBox.StandardButton.No)
    qtbot.mouseClick(view.cancel_button, Qt.MouseButton.LeftButton)
    assert part.stat().st_size == kept and _status(view) == "paused"  # declined: kept

    requests = len(hub.downloads())
    _answer(monkeypatch, QMessageBox.StandardButton.Yes)
    view.cancel_button.setFocus()
    qtbot.keyClick(view.cancel_button, Qt.Key.Key_Space)  # reachable from the keyboard
    qtbot.waitUntil(lambda: _status(view) == "cancelled", timeout=10_000)
    assert not part.exists() and _parts(ctx) == []
    assert len(hub.downloads()) == requests  # cancelling a pause does not resume it
    assert ctx.installed.all() == []
    assert not view.cancel_button.isEnabled()
    win.close()


def test_a_part_left_by_an_earlier_session_can_be_cancelled(
    qtbot, hub: FakeHub, monkeypatch: pytest.MonkeyPatch, context: AppContext
) -> None:
    part = context.paths.models_dir / CAT_REPO / (CAT_FILE + ".part")
    part.parent.mkdir(parents=True)
    part.write_bytes(b"x" * 5000)  # what a pull killed by a reboot leaves
    win = MainWindow(context)
    qtbot.addWidget(win)
    wait_listed(qtbot, win)
    view = win.models
    view.table.selectRow(_row(view))
    assert view.cancel_button.isEnabled()
    _answer(monkeypatch, QMessageBox.StandardButton.Yes)
    qtbot.mouseClick(view.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: _status(view) == "cancelled", timeout=10_000)
    assert not part.exists() and not (context.paths.models_dir / "THUDM").exists()
    assert "deleted 5.0 KB" in view.status.text()
    assert hub.downloads() == []
    win.close()


HUB_REPO, HUB_FILE = "someone/Other-Chat-GGUF", "Other-Chat-Q4_K_M.gguf"
HUB_REF = f"{HUB_REPO}:{HUB_FILE}"


def _hub_status(view: ModelsView) -> str | None:
    rows = [
        n for n in range(view.table_model.rowCount()) if view.table_model.row_at(n).id == HUB_REF
    ]
    return str(view.table_model.index(rows[0], 6).data() or "") if rows else None


def test_a_hub_search_download_gets_a_row_with_pause_and_cancel_across_restarts(
    qtbot, hub: FakeHub, tiny_chat: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    size = len(tiny_chat.read_bytes())
    hub.add_repo(HUB_REPO, {HUB_FILE: tiny_chat.read_bytes()})
    hub.add_fault(HUB_REPO, HUB_FILE, Fault("throttle", bytes_per_s=size // 4, times=1))
    win, ctx = _window(qtbot)
    view = win.models
    assert _hub_status(view) is None
    worker = view.download(HUB_REF)  # what Hub search's "Download quant" calls
    assert worker is not None and _hub_status(view) is not None
    qtbot.waitUntil(lambda: bool(_parts(ctx)), timeout=10_000)
    with qtbot.waitSignal(worker.paused, timeout=10_000):
        view.pause(HUB_REF)
    qtbot.waitUntil(lambda: _hub_status(view) == "paused", timeout=5000)
    win.close()

    again, _ = _window(qtbot)  # a restart: the paused pull is still listed, not forgotten
    view = again.models
    assert _hub_status(view) == "paused"
    row = next(
        n for n in range(view.table_model.rowCount()) if view.table_model.row_at(n).id == HUB_REF
    )
    # Named by the id it will have once in, as imports are: no ".gguf".
    assert view.table_model.row_at(row).name == HUB_FILE.removesuffix(".gguf")
    view.table.selectRow(row)
    assert view.cancel_button.isEnabled()
    _answer(monkeypatch, QMessageBox.StandardButton.Yes)
    qtbot.mouseClick(view.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: _hub_status(view) is None, timeout=10_000)  # row gone
    assert _parts(ctx) == [] and ctx.installed.all() == []
    again.close()
