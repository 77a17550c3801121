"""Attaching pictures and documents in the real window: Attach, paste, drop, what the
model is sent, the thumbnails in the transcript, a model that cannot see, the export."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QGuiApplication, QImage
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QFileDialog

from desktop.engine._types import Message
from desktop.ui.shell.main_window import MainWindow
from tests.fixtures.pictures import png

if TYPE_CHECKING:
    from desktop.root.context import AppContext

pytestmark = pytest.mark.qt


class Recorder:
    """The window's streamer, passing every request on and keeping what it was sent."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.sent: list[list[Message]] = []

    def stream_chat(self, model: str, call: Any, *args: Any, **kwargs: Any) -> Any:
        self.sent.append(list(call.messages))
        return self.inner.stream_chat(model, call, *args, **kwargs)


def _recording(win: MainWindow) -> Recorder:
    recorder = Recorder(win.chat.core.streamer)
    win.chat.core.streamer = recorder
    return recorder


def _files(tmp_path: Path) -> tuple[Path, Path]:
    picture = tmp_path / "red square.png"
    picture.write_bytes(png(64, 48))
    notes = tmp_path / "notes.md"
    notes.write_text("# Minutes\n\nThe otter budget is 17 fish.\n", encoding="utf-8")
    return picture, notes


def _attach(qtbot, win: MainWindow, paths: list[Path]) -> None:
    """Attach ``paths`` as the Attach button would, and wait until they are read."""
    win.chat.attach.attach_paths(paths)
    qtbot.waitUntil(lambda: not win.chat.attach.busy, timeout=10_000)


def _send(qtbot, win: MainWindow, text: str) -> Any:
    chat = win.chat
    chat.current.max_tokens = 8
    chat.input.setPlainText(text)
    with qtbot.waitSignal(chat.generation_finished, timeout=30_000) as finished:
        qtbot.mouseClick(chat.send_button, Qt.MouseButton.LeftButton)
    return finished.args[0]


def test_attach_button_sends_the_picture_and_the_document_and_shows_them(
    qtbot,
    window: MainWindow,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    tiny_chat: Path,
    tiny_projector: Path,
) -> None:
    picture, notes = _files(tmp_path)
    chat = window.chat
    # The tiny model with its projector: a vision model the engine really encodes for.
    window.context.installed.import_file(tiny_chat, projector=tiny_projector)
    assert chat.core.sees(chat.current.model)
    recorder = _recording(window)
    monkeypatch.setattr(
        QFileDialog, "getOpenFileNames", lambda *a, **k: ([str(picture), str(notes)], "")
    )
    qtbot.mouseClick(chat.composer.attach_button, Qt.MouseButton.LeftButton)
    assert chat.attach.busy  # read on a worker, not on the window's thread
    qtbot.waitUntil(lambda: len(chat.composer.chips.chips) == 2, timeout=10_000)
    chips = chat.composer.chips
    assert chips.isVisible()
    assert [c.label.text() for c in chips.chips] == ["red square.png", "notes.md"]
    # Removable before sending: remove the document, attach it again.
    qtbot.mouseClick(chips.chips[1].remove_button, Qt.MouseButton.LeftButton)
    assert [c.item.name for c in chips.chips] == ["red square.png"]
    _attach(qtbot, window, [notes])

    turn = _send(qtbot, window, "What do you see?")
    assert turn is not None
    question = recorder.sent[0][-1]
    assert [(i.mime, i.data) for i in question.images] == [("image/png", picture.read_bytes())]
    assert "Attached file notes.md:\n```\n# Minutes" in question.content
    assert question.content.endswith("What do you see?")
    assert not chips.isVisible() and chips.items() == []  # sent: the chips are gone
    bubble = chat._bubbles[0]
    [thumb] = bubble.attachments.thumbnails
    assert not thumb.pixmap().isNull() and thumb.pixmap().width() == 64
    assert [f.text() for f in bubble.attachments.files] == ["notes.md"]
    assert bubble.shown_markdown == "What do you see?"  # the words alone, not the file
    # Saved with the conversation: the stored question holds both.
    store = window.context.chat_store
    [conv] = store.list_conversations()
    stored = store.get_messages(conv.id)[0]
    assert [a.name for a in stored.attachments] == ["red square.png", "notes.md"]


def test_a_pasted_picture_for_a_model_that_cannot_see_is_said_and_not_sent(
    qtbot, window: MainWindow
) -> None:
    chat = window.chat
    recorder = _recording(window)
    image = QImage(30, 20, QImage.Format.Format_RGB32)
    image.fill(Qt.GlobalColor.blue)
    QGuiApplication.clipboard().setImage(image)
    chat.input.setFocus()
    QTest.keyClick(chat.input, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    [chip] = chat.composer.chips.chips
    assert chip.item.kind == "image" and chip.item.mime == "image/png"
    assert chat.input.toPlainText() == ""  # attached, not pasted in as text
    # Said at once, before sending: the tiny model has no vision projector.
    assert chat.notice.isVisible() and "cannot see pictures" in chat.notice.text()
    chat.notice.setVisible(False)
    chat.input.setPlainText("what colour?")
    qtbot.mouseClick(chat.send_button, Qt.MouseButton.LeftButton)
    assert recorder.sent == [] and chat.current.turns == []  # refused, not dropped
    assert chat.notice.isVisible() and "cannot see pictures" in chat.notice.text()
    assert chat.composer.chips.items() and chat.input.toPlainText() == "what colour?"
    # Removing the picture lets the words go.
    qtbot.mouseClick(chip.remove_button, Qt.MouseButton.LeftButton)
    with qtbot.waitSignal(chat.generation_finished, timeout=30_000):
        qtbot.mouseClick(chat.send_button, Qt.MouseButton.LeftButton)
    assert recorder.sent[0][-1].images == ()


def _drop(target, paths: list[Path]) -> bool:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    with warnings.catch_warnings():  # Qt 6's only QDragEnterEvent constructor, flagged
        warnings.simplefilter("ignore", DeprecationWarning)
        enter = QDragEnterEvent(
            QPoint(40, 40),
            Qt.DropAction.CopyAction,
            mime,
            Qt.MouseButton.LeftButton,
            Qt.KeyboardModifier.NoModifier,
        )
    QApplication.sendEvent(target, enter)
    if not enter.isAccepted():
        return False
    drop = QDropEvent(
        QPointF(40, 40),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(target, drop)
    return drop.isAccepted()


def test_a_document_dropped_on_the_chat_is_attached_and_quoted(
    qtbot, window: MainWindow, tmp_path: Path
) -> None:
    _, notes = _files(tmp_path)
    chat = window.chat
    recorder = _recording(window)
    assert _drop(chat, [notes])
    qtbot.waitUntil(lambda: not chat.attach.busy, timeout=10_000)
    assert [c.item.name for c in chat.composer.chips.chips] == ["notes.md"]
    unsupported = tmp_path / "tool.exe"
    unsupported.write_bytes(b"MZ" + b"\x00" * 64)
    assert _drop(chat, [unsupported])
    qtbot.waitUntil(lambda: not chat.attach.busy, timeout=10_000)
    assert "tool.exe" in chat.notice.text()  # said why, nothing attached
    assert len(chat.composer.chips.chips) == 1
    _send(qtbot, window, "How many fish?")
    assert "The otter budget is 17 fish." in recorder.sent[0][-1].content


def test_export_writes_the_picture_beside_the_markdown(
    qtbot, window: MainWindow, tmp_path: Path, tiny_chat: Path, tiny_projector: Path
) -> None:
    picture, _ = _files(tmp_path)
    chat = window.chat
    window.context.installed.import_file(tiny_chat, projector=tiny_projector)
    _attach(qtbot, window, [picture])
    _send(qtbot, window, "look")
    target = tmp_path / "out" / "look.md"
    target.parent.mkdir()
    assert chat.sidebar.export_to(str(target), chat.current.store_id, as_json=False)
    [written] = (target.parent / "look-attachments").iterdir()
    assert written.read_bytes() == picture.read_bytes()
    assert f"](<look-attachments/{written.name}>)" in target.read_text(encoding="utf-8")


def test_edit_and_resend_keeps_the_attachments_unless_removed(
    qtbot, window: MainWindow, tmp_path: Path
) -> None:
    _, notes = _files(tmp_path)
    chat = window.chat
    recorder = _recording(window)
    _attach(qtbot, window, [notes])
    _send(qtbot, window, "How many fish?")
    qtbot.mouseClick(chat._bubbles[0].edit_button, Qt.MouseButton.LeftButton)
    assert [c.item.name for c in chat.composer.chips.chips] == ["notes.md"]
    _send(qtbot, window, "How many otters?")
    assert "The otter budget is 17 fish." in recorder.sent[1][-1].content
    assert [a.name for a in chat.current.turns[0].attachments] == ["notes.md"]
    qtbot.mouseClick(chat._bubbles[0].edit_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(chat.composer.chips.chips[0].remove_button, Qt.MouseButton.LeftButton)
    _send(qtbot, window, "Just words now")
    assert recorder.sent[2][-1].content == "Just words now"
    assert chat.current.turns[0].attachments == [] and chat._bubbles[0].attachments is None


def test_choosing_a_model_that_cannot_see_with_a_picture_attached_says_so(
    qtbot, window: MainWindow, tmp_path: Path
) -> None:
    picture, _ = _files(tmp_path)
    chat = window.chat
    model = chat.current.model
    chat.core.sees = lambda ref: ref == "a-vision-model"
    chat.current.model = "a-vision-model"
    _attach(qtbot, window, [picture])
    assert not chat.notice.isVisible()  # this model sees: nothing to say
    chat.model_box.setCurrentIndex(-1)
    chat.model_box.setCurrentIndex(chat.model_box.findData(model))
    assert chat.current.model == model
    assert chat.notice.isVisible() and "cannot see pictures" in chat.notice.text()


def test_a_reopened_chat_shows_its_thumbnails_and_files_after_a_restart(
    qtbot, edgedesk_home: Path, tiny_chat: Path, tmp_path: Path, tiny_projector: Path
) -> None:
    from desktop.base.config import NoPolicy
    from desktop.root.context import build_context

    def start() -> MainWindow:
        win = MainWindow(build_context(policy=NoPolicy()))  # over the same EDGEDESK_HOME
        qtbot.addWidget(win)
        win.show()
        return win

    picture, notes = _files(tmp_path)
    first = start()
    first.context.installed.import_file(tiny_chat, projector=tiny_projector)
    first.use_model(first.models.import_file(tiny_chat))
    _attach(qtbot, first, [picture, notes])
    _send(qtbot, first, "Keep these")
    first.close()

    again = start()
    [stored] = [c for c in again.chat.chats.chats() if c.store_id is not None]
    again.chat.select(stored)
    bubble = again.chat._bubbles[0]
    [thumb] = bubble.attachments.thumbnails
    assert thumb.pixmap().width() == 64 and thumb.toolTip().startswith("red square.png")
    assert [f.text() for f in bubble.attachments.files] == ["notes.md"]
    again.close()


def test_the_windows_picture_caps_are_the_settings_forced_by_policy(
    qtbot, edgedesk_home: Path, tmp_path: Path, context: AppContext
) -> None:
    context.apply_settings({"image_max_megapixels": 1})  # as IT's ImageMaxMegapixels would
    win = MainWindow(context)
    qtbot.addWidget(win)
    win.show()
    wide = tmp_path / "wide.png"
    wide.write_bytes(png(1000, 1100))  # 1.1 megapixels: fine under the default 50
    small, _ = _files(tmp_path)
    _attach(qtbot, win, [wide, small])
    chat = win.chat
    assert "1000 x 1100 pixels" in chat.notice.text()  # said why, not attached
    assert [c.item.name for c in chat.composer.chips.chips] == [small.name]
    win.close()
