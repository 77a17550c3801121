"""What the screenshots showed wrong: texts cut off, empty boxes that say nothing."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QLabel, QWidget

from desktop.root.context import AppContext
from desktop.ui.settings.dialog import SettingsDialog
from desktop.ui.shell.main_window import MainWindow

pytestmark = pytest.mark.qt


def _whole(label: QLabel) -> bool:
    """Whether every wrapped line of ``label`` is inside its height and inside its parent."""
    need = label.heightForWidth(label.width())
    parent = label.parentWidget()
    assert parent is not None
    bottom = label.mapTo(parent, label.rect().bottomLeft()).y()
    return label.height() >= need and bottom <= parent.height()


def _shown_whole(qtbot, dialog: QWidget, label: QLabel) -> None:
    dialog.show()
    qtbot.waitExposed(dialog)
    try:  # the layout settles on posted events: wait for them, not for a clock
        qtbot.waitUntil(lambda: label.width() > 0 and _whole(label), timeout=2000)
    except qtbot.TimeoutError:
        pytest.fail(
            f"cut off: {label.text()!r} is {label.height()} px tall, "
            f"needs {label.heightForWidth(label.width())}"
        )


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_the_encryption_note_in_settings_is_not_cut_off(
    qtbot, context: AppContext, language: str
) -> None:
    from PySide6.QtWidgets import QApplication

    from desktop.ui.common.look import install_translator

    app = QApplication.instance()
    assert isinstance(app, QApplication)
    translator = install_translator(app, language)
    try:
        dialog = SettingsDialog(context.paths, context.effective, encryption={"encrypted": False})
        qtbot.addWidget(dialog)
        assert dialog.encryption is not None
        _shown_whole(qtbot, dialog, dialog.encryption.state)
    finally:
        if translator is not None:
            app.removeTranslator(translator)


def test_window_opens_settings_with_every_note_whole(qtbot, context: AppContext) -> None:
    win = MainWindow(context)
    qtbot.addWidget(win)
    dialog = win.open_settings()
    qtbot.addWidget(dialog)
    assert dialog.encryption is not None
    _shown_whole(qtbot, dialog, dialog.encryption.state)


def test_server_page_says_what_its_empty_boxes_are_for(qtbot, context: AppContext) -> None:
    from PySide6.QtCore import Qt

    win = MainWindow(context)
    qtbot.addWidget(win)
    win.show()
    win.show_page("server")  # the keys are listed when the screen is first shown
    panel = win.server
    qtbot.waitUntil(lambda: panel.key_list.count() == 1)
    empty = panel.key_list.item(0)
    assert "No API keys yet" in empty.text() and "New key" in empty.text()
    assert not empty.flags() & Qt.ItemFlag.ItemIsSelectable  # not a key to revoke
    panel.key_list.setCurrentRow(0)
    assert panel._selected() is None
    assert "No requests yet" in panel.log.placeholderText()
    key = panel.create_key("editor")
    assert key and panel.key_list.count() == 1 and "editor" in panel.key_list.item(0).text()


def test_a_cited_place_is_worded_in_chinese(qtbot, tmp_path) -> None:
    from PySide6.QtWidgets import QApplication

    from desktop.store._cited_passages import Source
    from desktop.ui.chat.source_viewer import SourceViewer
    from desktop.ui.common.look import install_translator

    notes = tmp_path / "notes.md"
    notes.write_text("".join(f"line {n}\n" for n in range(1, 20)), encoding="utf-8")
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    translator = install_translator(app, "zh_CN")
    assert translator is not None
    try:
        viewer = SourceViewer(Source(2, str(notes), None, 4, 6, "line 4"))
        qtbot.addWidget(viewer)
        assert viewer.location.text() == f"{notes} 第 4–6 行"
    finally:
        app.removeTranslator(translator)
    english = SourceViewer(Source(2, str(notes), 3, 4, 4, "line 4"))
    qtbot.addWidget(english)
    assert english.location.text() == f"{notes} p. 3, line 4"  # as Source.location says it


def test_tools_page_has_a_page_title_and_whole_tool_names(qtbot, context: AppContext) -> None:
    from PySide6.QtWidgets import QApplication

    from desktop.ui.common.look import apply_theme

    app = QApplication.instance()
    assert isinstance(app, QApplication)
    apply_theme(app, "light")
    win = MainWindow(context)
    qtbot.addWidget(win)
    win.resize(900, 600)
    win.show()
    win.show_page("tools")
    view = win.tools
    qtbot.waitUntil(view.isVisible)
    titles = {
        page: next(w for w in page.findChildren(QLabel) if w.text() == text)
        for page, text in ((win.models, "Models"), (view, "Tools"))
    }
    # The same big bold title as every other page, not body text.
    assert titles[view].fontInfo().pixelSize() == titles[win.models].fontInfo().pixelSize()
    assert titles[view].fontInfo().pixelSize() > view.note.fontInfo().pixelSize()
    tree = view.tree
    builtin = tree.topLevelItem(0)
    names = [builtin.text(0)] + [builtin.child(i).text(0) for i in range(builtin.childCount())]
    assert "search_documents" in names
    metrics = tree.fontMetrics()
    for depth, name in [(1, names[0])] + [(2, n) for n in names[1:]]:
        assert (
            tree.columnWidth(0) >= metrics.horizontalAdvance(name) + depth * tree.indentation()
        ), f"{name!r} is cut off"


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_parameters_button_looks_like_its_neighbour_and_shows_it_is_open(
    qtbot, context: AppContext, theme: str
) -> None:
    from PySide6.QtWidgets import QApplication

    from desktop.ui.common.look import apply_theme

    app = QApplication.instance()
    assert isinstance(app, QApplication)
    apply_theme(app, theme)
    win = MainWindow(context)
    qtbot.addWidget(win)
    win.resize(1180, 760)
    win.show()
    qtbot.waitExposed(win)
    header = win.chat.header
    button, neighbour = header.parameters_button, header.save_preset_button
    qtbot.waitUntil(lambda: button.height() > 0)
    assert button.height() == neighbour.height()  # not a smaller, borderless thing
    closed = button.grab().toImage().pixelColor(button.width() // 2, 3)
    button.setChecked(True)
    qtbot.waitUntil(header.parameters.isVisible)
    opened = button.grab().toImage().pixelColor(button.width() // 2, 3)
    assert opened != closed  # the open panel's button is drawn pressed


def test_why_a_file_was_skipped_is_said_in_chinese(qtbot, tmp_path) -> None:
    from PySide6.QtWidgets import QApplication

    from desktop.retrieval._loaders import SkipFile, load
    from desktop.ui.common.core_text import skip_reason_text
    from desktop.ui.common.look import install_translator

    files = {
        "chart.png": b"\x89PNG",
        "empty.txt": b"",
        "blob.txt": b"\x00\x01\x02" * 50,
        "big.md": b"x" * 2_000,
    }
    reasons = []
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(SkipFile) as skipped:
            load(tmp_path / name, max_bytes=1_000)
        reasons.append(skipped.value.reason)
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    translator = install_translator(app, "zh_CN")
    assert translator is not None
    try:
        said = [skip_reason_text(r) for r in reasons]
    finally:
        app.removeTranslator(translator)
    assert said[0] == "不支持的文件类型“.png”"
    assert said[1:] == ["空文件", "二进制文件，不是文本", "文件过大（2.0 KB；上限为 1.0 KB）"]
    assert skip_reason_text("a reason from a later version") == "a reason from a later version"


def test_documents_cancel_is_a_button_not_a_bar_across_the_page(qtbot, context: AppContext) -> None:
    win = MainWindow(context)
    qtbot.addWidget(win)
    win.resize(1180, 760)
    win.show()
    win.show_page("documents")
    view = win.documents
    qtbot.waitUntil(lambda: view.cancel_button.width() > 0)
    assert not view.progress.isVisible()  # nothing is being indexed
    assert view.cancel_button.width() <= view.cancel_button.sizeHint().width() + 8
    view.progress.setVisible(True)  # while indexing the bar takes the room
    qtbot.waitUntil(lambda: view.progress.width() > 5 * view.cancel_button.width())


@pytest.mark.parametrize(
    ("language", "theme"), [("en", "light"), ("en", "dark"), ("zh_CN", "light")]
)
def test_the_window_fits_900_by_600_with_send_and_parameters_in_view(
    qtbot, context: AppContext, language: str, theme: str
) -> None:
    from PySide6.QtCore import QPoint
    from PySide6.QtWidgets import QApplication

    from desktop.ui.common.look import apply_theme, install_translator

    app = QApplication.instance()
    assert isinstance(app, QApplication)
    translator = install_translator(app, language)
    apply_theme(app, theme)
    try:
        win = MainWindow(context)
        qtbot.addWidget(win)
        win.resize(900, 600)
        win.show()
        qtbot.waitExposed(win)
        win.chat.header.parameters_button.setChecked(True)  # the widest the chat gets
        qtbot.waitUntil(win.chat.header.parameters.isVisible)
        assert win.minimumSizeHint().width() <= 900
        qtbot.waitUntil(lambda: win.width() == 900)
        for control in (
            win.chat.send_button,
            win.chat.header.parameters_button,
            win.chat.header.ephemeral,
        ):
            right = control.mapTo(win, QPoint(control.width(), 0)).x()
            assert right <= win.width(), f"{control.text()!r} is off the window"
    finally:
        if translator is not None:
            app.removeTranslator(translator)


def test_a_narrow_documents_drop_down_shows_its_text_cut_with_an_ellipsis(
    qtbot, context: AppContext
) -> None:
    win = MainWindow(context)
    qtbot.addWidget(win)
    win.resize(900, 600)
    win.show()
    qtbot.waitExposed(win)
    box = win.chat.header.collection_box
    qtbot.waitUntil(lambda: box.width() > 0)
    assert box.currentText() == "No documents"
    shown = box.shown_text()
    assert shown.endswith("…") and "No documents".startswith(shown[:-1]), shown
    win.resize(1440, 860)  # with room, the whole name
    qtbot.waitUntil(lambda: box.shown_text() == "No documents")


def test_a_long_answer_footer_wraps_instead_of_widening_the_transcript(qtbot) -> None:
    from desktop.chat import Turn
    from desktop.ui.chat.message import MessageWidget

    error = (
        "the model stopped answering: "
        + "a very long reason from the engine " * 6
        + "/home/someone/models/"
        + "x" * 60
        + ".gguf"
    )
    turn = Turn(
        "assistant", "Half an answer", finish_reason="error", error=error, tokens_per_s=12.5
    )
    bubble = MessageWidget(0, turn, last=True)
    qtbot.addWidget(bubble)
    assert error in bubble.footer.text()  # said whole, on as many lines as it needs
    assert bubble.minimumSizeHint().width() < 400  # the 900 px window's transcript is ~510
    bubble.resize(420, 400)
    bubble.show()
    qtbot.waitUntil(lambda: bubble.footer.height() > bubble.footer.fontMetrics().height())
