"""Small things a day in the window runs into (issue 24, items 8–16)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from desktop.ui.shell.main_window import MainWindow
from tests.ui.conftest import send

pytestmark = pytest.mark.qt


def _answer(monkeypatch: pytest.MonkeyPatch, button: QMessageBox.StandardButton) -> list[str]:
    asked: list[str] = []

    def question(_parent: object, _title: str, text: str, *_a: object) -> object:
        asked.append(text)
        return button

    monkeypatch.setattr(QMessageBox, "question", question)
    return asked


def test_deleting_a_chat_asks_first(
    qtbot, window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    chat = window.chat
    send(qtbot, window, "keep me")
    kept = chat.current
    asked = _answer(monkeypatch, QMessageBox.StandardButton.No)
    qtbot.mouseClick(chat.sidebar.delete_button, Qt.MouseButton.LeftButton)
    assert len(asked) == 1 and "Undo brings it back" in asked[0]
    assert chat.current is kept and kept in chat.chats.chats()  # said no: still there
    asked = _answer(monkeypatch, QMessageBox.StandardButton.Yes)
    qtbot.mouseClick(chat.sidebar.delete_button, Qt.MouseButton.LeftButton)
    assert kept not in chat.chats.chats()
    empty = chat.current
    assert empty is not None and not empty.turns
    asked = _answer(monkeypatch, QMessageBox.StandardButton.No)
    chat.new_chat()
    qtbot.mouseClick(chat.sidebar.delete_button, Qt.MouseButton.LeftButton)
    assert asked == []  # nothing to lose: an empty chat goes at once


def test_an_ephemeral_chat_says_so_however_long_its_title(qtbot, window: MainWindow) -> None:
    chat = window.chat
    saved = chat.current
    send(qtbot, window, "a saved chat with a long first message that becomes its title")
    assert not chat.header.ephemeral_banner.isVisible()
    fresh = chat.new_chat()
    qtbot.mouseClick(chat.ephemeral, Qt.MouseButton.LeftButton)
    assert fresh.ephemeral and chat.header.ephemeral_banner.isVisible()
    send(qtbot, window, "an ephemeral chat with a long first message that becomes its title")
    row = chat.chats.chats().index(fresh)
    shown = chat.chats.index(row, 0).data()
    assert shown.startswith("⌀ ")  # the marker leads: eliding the title cannot cut it off
    assert chat.chats.index(row, 0).data(Qt.ItemDataRole.EditRole) == fresh.title
    chat.select(saved)  # type: ignore[arg-type]
    assert not chat.header.ephemeral_banner.isVisible()
    chat.select(fresh)
    assert chat.header.ephemeral_banner.isVisible()


def test_the_server_screen_copies_snippets_and_shows_a_new_key_once(
    qtbot, window: MainWindow
) -> None:
    from PySide6.QtGui import QGuiApplication

    from desktop.server._client_setups import KEY

    panel = window.server
    window.show_page("server")
    clipboard = QGuiApplication.clipboard()
    clipboard.setText("before")
    key = panel.create_key("vscode")
    assert key is not None
    assert clipboard.text() == "before"  # not put on the clipboard behind the user's back
    assert panel.key_field.text() == key and panel.key_row.isVisible()
    for number in range(panel.client_picker.count()):
        panel.client_picker.setCurrentIndex(number)
        text = panel.snippet.toPlainText()
        assert KEY not in text, panel.client_picker.currentText()
    panel.client_picker.setCurrentIndex(panel.client_picker.findText("Python (openai)"))
    assert key in panel.snippet.toPlainText() and "max_tokens=" in panel.snippet.toPlainText()
    qtbot.mouseClick(panel.copy_snippet, Qt.MouseButton.LeftButton)
    assert clipboard.text() == panel.snippet.toPlainText()  # the whole snippet, not the URL
    assert "/v1/responses" in panel.log_title.text()  # it stores prompts: the page says so
    assert "until deleted" in panel.log_title.text()

    window.show_page("chat")  # leaving the screen: the key is not shown again
    window.show_page("server")
    assert not panel.key_row.isVisible() and key not in panel.key_field.text()
    assert key not in panel.snippet.toPlainText() and KEY in panel.snippet.toPlainText()
    assert key not in panel.notice.text()


def _select(win: MainWindow, ref: str) -> None:
    view = win.models
    row = next(
        n for n in range(view.table_model.rowCount()) if view.table_model.row_at(n).id == ref
    )
    view.table.selectRow(row)


def test_use_in_chat_starts_a_chat_and_refuses_an_embedding_model(
    qtbot, window: MainWindow, tiny_embed
) -> None:
    chat = window.chat
    send(qtbot, window, "an open conversation")
    talked = chat.current
    assert talked is not None
    embed = window.models.import_file(tiny_embed)
    window.show_page("models")
    _select(window, embed)
    qtbot.mouseClick(window.models.use_button, Qt.MouseButton.LeftButton)
    assert chat.current is talked and talked.model == "tiny-chat"  # not emptied
    assert "embedding model" in window.models.status.text()
    assert window.stack.currentWidget() is window.models

    _select(window, "tiny-chat")
    qtbot.mouseClick(window.models.use_button, Qt.MouseButton.LeftButton)
    assert window.stack.currentWidget() is window.chat
    assert chat.current is not talked and not chat.current.turns  # a new chat for it
    assert chat.current.model == "tiny-chat" and len(talked.turns) == 2


def test_tab_leaves_the_composer_and_an_edited_first_question_retitles(
    qtbot, window: MainWindow
) -> None:
    chat = window.chat
    chat.input.setFocus()
    qtbot.waitUntil(chat.input.hasFocus, timeout=2000)
    qtbot.keyClick(chat.input, Qt.Key.Key_Tab)
    assert "\t" not in chat.input.toPlainText() and not chat.input.hasFocus()

    send(qtbot, window, "What is the capital of France")
    talked = chat.current
    assert talked is not None and talked.title == "What is the capital of France"
    chat.edit(0)
    send(qtbot, window, "What is the capital of Italy")
    assert talked.title == "What is the capital of Italy"
    stored = {c.id: c.title for c in window.context.chat_store.list_conversations()}
    assert stored[talked.store_id] == "What is the capital of Italy"  # kept after a restart

    chat.chats.setData(chat.chats.index(chat.chats.chats().index(talked), 0), "Travel")
    chat.edit(0)
    send(qtbot, window, "What is the capital of Spain")
    assert talked.title == "Travel"  # a name the user gave stays


def test_export_names_a_valid_file_and_writes_json_that_imports_back(
    qtbot, window: MainWindow, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from PySide6.QtWidgets import QFileDialog

    chat = window.chat
    send(qtbot, window, 'Why? "Really": a/b <c> | d*')
    talked = chat.current
    suggested: list[str] = []
    target = tmp_path / "chat.json"

    def save_as(_parent: object, _title: str, name: str, filters: str) -> tuple[str, str]:
        suggested.append(name)
        assert "JSON (*.json)" in filters
        return str(target), "JSON (*.json)"

    monkeypatch.setattr(QFileDialog, "getSaveFileName", save_as)
    qtbot.mouseClick(chat.sidebar.export_button, Qt.MouseButton.LeftButton)
    assert not any(c in suggested[0] for c in '<>:"/\\|?*')  # Windows refuses these
    assert suggested[0].endswith(".md") and suggested[0].startswith("Why_")
    store = window.context.chat_store
    assert target.read_text(encoding="utf-8") == store.export_json([talked.store_id])

    before = len(chat.chats.chats())
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(target), ""))
    qtbot.mouseClick(chat.sidebar.import_button, Qt.MouseButton.LeftButton)
    assert len(chat.chats.chats()) == before + 1 and chat.current is not talked
    assert chat.current.title == talked.title
    assert [t.content for t in chat.current.turns] == [t.content for t in talked.turns]
    assert chat.notice.text() == "Imported 1 chat."


def test_the_chinese_window_titles_buttons_dialogs_and_commas_in_chinese(
    qtbot, qapp, context, tiny_chat, tmp_path
) -> None:
    from PySide6.QtCore import QCoreApplication
    from PySide6.QtWidgets import QDialogButtonBox

    from desktop.ui.common.look import install_translator

    translator = install_translator(qapp, "zh_CN")
    assert translator is not None
    try:
        win = MainWindow(context)
        qtbot.addWidget(win)
        chat = win.chat
        assert chat.chats.index(chat.chats.row_of(chat.current), 0).data() == "新对话"
        settings = win.open_settings()
        box = settings.findChild(QDialogButtonBox)
        texts = {b.text().replace("&", "") for b in box.buttons()}
        assert not texts & {"Save", "Cancel"}, texts  # Qt's own words, from qtbase_zh_CN
        settings.reject()
        # What Qt's file dialogs say ("Look in:", "Directory:", "Choose").
        for context_name, words in (
            ("QFileDialog", "Look in:"),
            ("QFileDialog", "Directory:"),
            ("QFileDialog", "&Choose"),
        ):
            assert QCoreApplication.translate(context_name, words) != words
        assert win.documents.tr(", ") == "，"  # "4 个文档，4 个片段", not an ASCII comma
    finally:
        qapp.removeTranslator(translator)
    assert QCoreApplication.translate("QFileDialog", "Look in:") == "Look in:"  # all gone


def test_the_documents_summary_uses_the_languages_comma_and_plurals(qtbot, window) -> None:
    view = window.documents
    assert view._documents(1) == "1 document" and view._documents(4) == "4 documents"
    assert view._chunks(4) == "4 chunks"


def test_every_models_cell_sits_on_one_line_height(window) -> None:
    model = window.models.table_model
    for column in range(model.columnCount()):
        alignment = model.index(0, column).data(Qt.ItemDataRole.TextAlignmentRole)
        assert alignment is not None and Qt.AlignmentFlag(alignment) & Qt.AlignmentFlag.AlignVCenter


def _colours(image, rect) -> set[tuple[int, int, int]]:
    return {
        (c.red(), c.green(), c.blue())
        for c in (
            image.pixelColor(x, y)
            for y in range(rect.top(), rect.bottom())
            for x in range(rect.left(), min(rect.right(), image.width()))
        )
    }


def _coloured(rgb: tuple[int, int, int]) -> bool:
    return max(rgb) - min(rgb) > 60  # not black, grey or white: a hue


def test_the_fit_badge_and_status_dots_keep_their_colour(qtbot, window: MainWindow) -> None:
    from tests.ui.conftest import wait_listed

    wait_listed(qtbot, window)
    window.show_page("models")
    table = window.models.table
    table.selectRow(0)
    qtbot.waitUntil(lambda: window.models.selected() is not None, timeout=2000)
    rect = table.visualRect(window.models.table_model.index(0, 5))
    image = table.viewport().grab().toImage()
    assert any(_coloured(rgb) for rgb in _colours(image, rect))  # selected, still coloured
    window.context.apply_settings({"offline": True})  # the amber dot of Offline mode
    window.refresh_status()
    label = window.offline_status
    image = label.grab().toImage()
    assert any(_coloured(rgb) for rgb in _colours(image, image.rect()))


def test_a_long_collection_name_is_not_clipped(qtbot, window: MainWindow) -> None:
    box = window.chat.collection_box
    window.chat.set_collections(["Docs: Company handbook and travel policy"])
    index = box.findData("Docs: Company handbook and travel policy")
    assert index >= 0
    box.setCurrentIndex(index)
    need = box.fontMetrics().horizontalAdvance(box.itemText(index))
    assert box.sizeHint().width() > need


def test_markdown_table_borders_show_on_the_light_bubble() -> None:
    from PySide6.QtGui import QColor

    from desktop.ui.common.markdown_render import PALETTES
    from tests.ui.common.test_theme_contrast import _contrast

    bubble = {"light": QColor("#ffffff"), "dark": QColor("#23262d")}
    for theme, palette in PALETTES.items():
        assert _contrast(QColor(palette.rule), bubble[theme]) >= 2.5, theme


def test_the_first_send_says_the_model_is_loading(qtbot, window: MainWindow) -> None:
    chat = window.chat
    chat.current.max_tokens = 8
    chat.input.setPlainText("hello")
    with qtbot.waitSignal(chat.generation_finished, timeout=30_000):
        qtbot.mouseClick(chat.send_button, Qt.MouseButton.LeftButton)
        assert window.model_status.text() == "Loading tiny-chat…"
    assert window.model_status.text() == "Model: tiny-chat"


def test_the_documents_header_names_a_model_that_is_here(
    qtbot, window: MainWindow, tiny_embed
) -> None:
    window.show_page("documents")
    label = window.documents.model_label.text()
    assert "No embedding model is on this device yet" in label  # not "embedded with bge…"
    assert "bge-small-en-v1.5" in label  # what a new collection would download
    imported = window.models.import_file(tiny_embed)
    window.show_page("chat")
    window.show_page("documents")
    assert window.documents.model_label.text() == f"New collections are embedded with {imported}"


def test_the_local_catalog_can_be_filtered(qtbot, window: MainWindow) -> None:
    from tests.ui.conftest import wait_listed

    wait_listed(qtbot, window)
    view = window.models
    model = view.table_model
    shown = lambda: [  # noqa: E731
        model.row_at(n).id for n in range(model.rowCount()) if not view.table.isRowHidden(n)
    ]
    everything = shown()
    qtbot.keyClicks(view.filter, "bge embedding")
    assert shown() and all(ref.startswith("bge") for ref in shown())
    assert "bge-reranker-v2-m3" not in shown()  # a reranker, not an embedding model
    view.filter.clear()
    assert shown() == everything
    qtbot.keyClicks(view.filter, "tiny")
    assert shown() == ["tiny-chat"]
    view.refresh()  # a new listing keeps the filter
    qtbot.waitUntil(lambda: view.is_listed, timeout=20_000)
    assert shown() == ["tiny-chat"]
