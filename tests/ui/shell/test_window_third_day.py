"""The window's third day (issue 50): what still sent a person to a terminal, or tripped
them, done in the window instead. Each test drives the real window as a user would."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import httpx
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from desktop.base.config import NoPolicy, load_settings
from desktop.root.context import AppContext, build_context
from desktop.ui.shell.main_window import MainWindow
from tests.tools.conftest import SERVERS

pytestmark = pytest.mark.qt
LEFT = Qt.MouseButton.LeftButton


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# ---------------------------------------------------------------- 1: the API port
def test_a_taken_port_is_said_and_another_is_chosen_in_the_window(
    qtbot, context: AppContext
) -> None:
    win = MainWindow(context)
    qtbot.addWidget(win)
    win.show_page("server")
    panel = win.server
    assert panel.port.isEnabled() and panel.port.value() == 8765  # the default, editable
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    busy = int(taken.getsockname()[1])
    try:
        panel.port.setValue(busy)
        panel.port.editingFinished.emit()  # the user typed it and pressed Enter
        # Saved like every setting (settings.toml), and the address says it at once.
        assert load_settings(context.paths).settings.server.port == busy
        assert panel.address.text() == f"http://127.0.0.1:{busy}/v1"
        with qtbot.waitSignal(panel.state_changed, timeout=15_000) as tried:
            qtbot.mouseClick(panel.toggle, LEFT)
        assert tried.args == [False] and not panel.running
        said = panel.notice.text()
        assert f"Port {busy} is used by another program" in said and "--port" not in said
        offered = panel.port.value()
        assert offered != busy and f"Port {offered} is free" in said
        # The user takes the port offered: the server starts there, and it is kept.
        with qtbot.waitSignal(panel.state_changed, timeout=15_000) as started:
            qtbot.mouseClick(panel.toggle, LEFT)
        assert started.args == [True]
        url = f"http://127.0.0.1:{offered}/v1"
        assert panel.address.text() == url and url in panel.snippet.toPlainText()
        assert httpx.get(f"{url}/models").status_code == 401  # it answers there
        assert load_settings(context.paths).settings.server.port == offered
    finally:
        taken.close()
    with qtbot.waitSignal(panel.state_changed, timeout=15_000):
        qtbot.mouseClick(panel.toggle, LEFT)
    win.close()


def test_a_port_changed_while_serving_says_when_it_applies(qtbot, context: AppContext) -> None:
    port = _free_port()
    context.apply_settings({"server.port": port})  # saved, as a port typed earlier
    win = MainWindow(context)
    qtbot.addWidget(win)
    panel = win.server
    with qtbot.waitSignal(panel.state_changed, timeout=15_000):
        qtbot.mouseClick(panel.toggle, LEFT)
    other = _free_port()
    panel.port.setValue(other)
    panel.port.editingFinished.emit()
    assert "keeps its port until it is restarted" in panel.notice.text()
    assert panel.address.text() == f"http://127.0.0.1:{port}/v1"  # what really serves
    with qtbot.waitSignal(panel.state_changed, timeout=15_000):
        qtbot.mouseClick(panel.toggle, LEFT)  # stop
    with qtbot.waitSignal(panel.state_changed, timeout=15_000):
        qtbot.mouseClick(panel.toggle, LEFT)  # start again: on the new port
    assert panel.address.text() == f"http://127.0.0.1:{other}/v1"
    with qtbot.waitSignal(panel.state_changed, timeout=15_000):
        qtbot.mouseClick(panel.toggle, LEFT)
    win.close()


# ---------------------------------------------------------------- 12: curl
def test_use_it_from_offers_a_curl_line_with_the_real_address(qtbot) -> None:
    port = _free_port()
    win = MainWindow(build_context(policy=NoPolicy(), cli_settings={"server.port": port}))
    qtbot.addWidget(win)
    panel = win.server
    names = [panel.client_picker.itemText(i) for i in range(panel.client_picker.count())]
    assert "curl" in names
    panel.client_picker.setCurrentText("curl")
    shown = panel.snippet.toPlainText()
    assert shown.startswith(f"curl http://127.0.0.1:{port}/v1/chat/completions")
    assert 'Authorization: Bearer YOUR-EDGEDESK-KEY"' in shown
    key = panel.create_key("shell")
    assert key is not None and f"Bearer {key}" in panel.snippet.toPlainText()
    win.close()


# ---------------------------------------------------------------- 2: tool servers
def _server_rows(win: MainWindow) -> dict[str, object]:
    tree = win.tools.tree
    return {
        tree.topLevelItem(i).text(0): tree.topLevelItem(i) for i in range(tree.topLevelItemCount())
    }


def _add_calc(qtbot, win: MainWindow, name: str = "calc") -> None:
    page = win.tools
    qtbot.mouseClick(page.add_button, LEFT)
    form = page.form
    assert form is not None
    form.name.setText(name)
    form.command.setText(f'"{sys.executable}" "{SERVERS}" calc')
    qtbot.mouseClick(form.save_button, LEFT)


def _mcp_json(win: MainWindow) -> dict[str, object]:
    return dict(json.loads(win.context.tool_servers.path.read_text())["mcpServers"])


def test_a_tool_server_is_removed_by_button_menu_or_delete_key_after_asking(
    qtbot, monkeypatch, window: MainWindow
) -> None:
    window.show_page("tools")
    page = window.tools
    _add_calc(qtbot, window, "calc")
    _add_calc(qtbot, window, "calc2")
    assert set(_mcp_json(window)) == {"calc", "calc2"}
    asked: list[str] = []
    answer = [QMessageBox.StandardButton.No]

    def question(_parent, _title, text, *_a, **_k):
        asked.append(text)
        return answer[0]

    monkeypatch.setattr(QMessageBox, "question", question)
    page.tree.setCurrentItem(_server_rows(window)["calc"])
    assert page.remove_button.isEnabled()
    qtbot.mouseClick(page.remove_button, LEFT)
    assert "Remove the tool server calc?" in asked[-1]
    assert "calc" in _mcp_json(window)  # "No" keeps it
    answer[0] = QMessageBox.StandardButton.Yes
    qtbot.mouseClick(page.remove_button, LEFT)
    assert set(_mcp_json(window)) == {"calc2"} and "calc" not in _server_rows(window)
    assert "Removed the tool server calc." in page.note.text()

    # The Delete key on the selected row does the same, after the same question.
    page.tree.setCurrentItem(_server_rows(window)["calc2"])
    page.tree.setFocus()
    qtbot.keyClick(page.tree, Qt.Key.Key_Delete)
    assert "calc2" in asked[-1] and _mcp_json(window) == {}

    # The context menu names Edit and Remove on a server's row (not on the built-ins).
    _add_calc(qtbot, window, "calc3")
    row = _server_rows(window)["calc3"]
    where = page.tree.visualItemRect(row).center()
    page.tree.customContextMenuRequested.emit(where)
    assert page.menu is not None
    actions = {a.text(): a for a in page.menu.actions()}
    assert set(actions) == {"Edit…", "Remove…"}
    page.menu.close()
    actions["Remove…"].trigger()
    assert _mcp_json(window) == {}
    builtin = _server_rows(window)["Built-in (documents)"]
    page.tree.setCurrentItem(builtin)
    assert not page.remove_button.isEnabled() and not page.edit_button.isEnabled()


def test_a_tool_server_is_edited_and_renamed_in_its_form(qtbot, window: MainWindow) -> None:
    window.show_page("tools")
    page = window.tools
    _add_calc(qtbot, window, "calc")
    page.tree.setCurrentItem(_server_rows(window)["calc"])
    qtbot.mouseClick(page.edit_button, LEFT)
    form = page.form
    assert form is not None and form.windowTitle() == "Edit a tool server"
    assert form.name.text() == "calc" and str(SERVERS) in form.command.text()
    form.name.setText("arith")
    form.env.setPlainText("CALC_MODE=exact\n")
    qtbot.mouseClick(form.save_button, LEFT)
    servers = _mcp_json(window)
    assert list(servers) == ["arith"]
    assert servers["arith"] == {
        "command": sys.executable,
        "args": [str(SERVERS), "calc"],
        "env": {"CALC_MODE": "exact"},
    }
    assert "Saved arith" in page.note.text() and "arith" in _server_rows(window)


def _unused(_: Path) -> None:
    """Keep Path imported for the fixtures' annotations."""


# ---------------------------------------------------------------- 3: restore the key
def test_a_lost_key_is_restored_from_its_recovery_code_when_the_window_starts(
    qtbot, file_keyring: Path
) -> None:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from desktop.store._atrest import ring_delete
    from desktop.ui.settings.encryption import encrypt_at_start
    from desktop.ui.settings.key_restore import KeyRestoreDialog

    first = build_context(policy=NoPolicy())
    first.database_key  # noqa: B018 - a new install where a keyring works: encrypted
    first.chat_store.create_conversation("taxes", "m")
    code = first.at_rest.recovery_code()
    info = json.loads(Path(f"{first.paths.database}.key.json").read_text())
    first.close()
    assert first.data_lock is not None
    first.data_lock.release()
    ring_delete(info["key_id"])  # a reset keyring: the key is gone

    context = build_context(policy=NoPolicy())
    seen: dict[str, object] = {}

    def type_codes() -> None:
        dialog = QApplication.activeModalWidget()
        assert isinstance(dialog, KeyRestoreDialog)
        dialog.code.setText("ABCD-" * 13 + "ABCD")  # a typo'd code: refused, said in red
        qtbot.mouseClick(dialog.restore_button, LEFT)
        seen["error"] = dialog.error.text()
        seen["red"] = dialog.error.objectName() == "Error" and dialog.error.isVisible()
        dialog.code.setText(code)
        qtbot.mouseClick(dialog.restore_button, LEFT)

    QTimer.singleShot(0, type_codes)
    assert encrypt_at_start(context)
    assert seen["error"] and seen["red"]
    win = MainWindow(context)
    qtbot.addWidget(win)
    assert [c.title for c in context.chat_store.list_conversations()] == ["taxes"]
    win.close()


# ---------------------------------------------------------------- 4: language, restart
def test_a_new_language_says_it_needs_a_restart_and_restarts_when_asked(
    qtbot, context: AppContext
) -> None:
    from desktop.ui.shell.restart import relaunch_command

    win = MainWindow(context)
    qtbot.addWidget(win)
    win.show()
    dialog = win.open_settings()
    dialog.language.setCurrentIndex(dialog.language.findData("zh_CN"))
    dialog.accept()
    box = win.restart_box
    assert box is not None and box.isVisible()
    assert "after EdgeDesk restarts" in box.text()
    buttons = {b.text(): b for b in box.buttons()}
    assert set(buttons) == {"Restart now", "Later"}
    qtbot.mouseClick(buttons["Later"], LEFT)
    assert "next time EdgeDesk starts" in win.message.text() and not win.restart_requested
    assert load_settings(context.paths).settings.language == "zh_CN"  # saved either way

    again = win.open_settings()
    again.language.setCurrentIndex(again.language.findData("en"))
    again.accept()
    box = win.restart_box
    assert box is not None and box.isVisible()
    restart = next(b for b in box.buttons() if b.text() == "Restart now")
    qtbot.mouseClick(restart, LEFT)
    assert win.restart_requested and not win.isVisible()  # run_app relaunches on this
    # The same command line starts again (python -m desktop, the script, a frozen app).
    assert relaunch_command("/usr/bin/python3", ["python3", "-m", "desktop", "--port", "9"]) == [
        "/usr/bin/python3",
        "-m",
        "desktop",
        "--port",
        "9",
    ]


# ---------------------------------------------------------------- 7: encryption switch
def test_encryption_off_is_asked_first_and_each_switch_is_said_after(
    qtbot, file_keyring: Path, monkeypatch
) -> None:
    from desktop.store import _cipher as cipher

    context = build_context(cli_settings={"encrypt_at_rest": False}, policy=NoPolicy())
    context.chat_store.create_conversation("private", "m")
    win = MainWindow(context)
    qtbot.addWidget(win)
    win.show()
    database = context.paths.database
    dialog = win.open_settings()
    assert dialog.encryption is not None
    dialog.encryption.check.setChecked(True)
    dialog.accept()
    with qtbot.waitSignal(win.encryption_switch.finished_with, timeout=30_000):
        pass
    assert cipher.file_state(database) == "encrypted"
    assert "Your data is now encrypted" in win.message.text()
    assert win.key_backup is not None and win.key_backup.isVisible()  # says it, offers backup
    win.key_backup.reject()

    asked: list[str] = []
    answer = [QMessageBox.StandardButton.No]

    def question(_parent, title, text, *_a, **_k):
        asked.append(f"{title} {text}")
        return answer[0]

    monkeypatch.setattr(QMessageBox, "question", question)
    off = win.open_settings()
    assert off.encryption is not None
    off.encryption.check.setChecked(False)
    off.accept()
    assert asked and "plain files" in asked[-1]
    assert off.isVisible() and cipher.file_state(database) == "encrypted"  # "No": as it was
    answer[0] = QMessageBox.StandardButton.Yes
    off.accept()
    with qtbot.waitSignal(win.encryption_switch.finished_with, timeout=30_000):
        pass
    assert cipher.file_state(database) == "plaintext"
    assert win.switch_box is not None and win.switch_box.isVisible()
    assert "no longer encrypted" in win.switch_box.text()
    assert [c.title for c in context.chat_store.list_conversations()] == ["private"]
    win.close()


# ---------------------------------------------------------------- 10: closing mid-answer
def test_closing_mid_answer_with_the_server_running_says_what_stops_and_reopens_the_chat(
    qtbot, window: MainWindow, tiny_chat: Path
) -> None:
    context = window.context
    context.apply_settings({"server.port": _free_port()})
    with qtbot.waitSignal(window.server.state_changed, timeout=15_000):
        window.server.toggle_server()
    chat = window.chat
    assert chat.current is not None
    chat.current.max_tokens = 4000
    chat.input.setPlainText("Tell me a long story")
    qtbot.mouseClick(chat.send_button, LEFT)
    assert chat.is_generating
    window.close()  # the title bar's ×
    box = window.quit_box
    assert box is not None and box.isVisible() and window.isVisible()  # asked, not gone
    said = box.text()
    assert "answer being written stops" in said
    assert f"API server at {window.server.address.text()} stops" in said
    cancel = box.button(QMessageBox.StandardButton.Cancel)
    qtbot.mouseClick(cancel, LEFT)
    assert window.isVisible() and window.server.running  # Cancel: nothing stopped
    qtbot.waitUntil(lambda: not chat.is_generating, timeout=60_000)
    store_id = chat.current.store_id
    assert store_id is not None
    window.close()
    box = window.quit_box
    assert box is not None and "answer" not in box.text()  # only the server is left to say
    quit_button = next(b for b in box.buttons() if b.text() == "&Quit")
    qtbot.mouseClick(quit_button, LEFT)
    assert not window.isVisible() and not context.server.running
    assert context.data_lock is not None
    context.data_lock.release()

    # Reopened: the chat the user left, with its question, not an empty "New chat".
    again = MainWindow(build_context(policy=NoPolicy()))
    qtbot.addWidget(again)
    current = again.chat.current
    assert current is not None and current.store_id == store_id
    assert current.turns and current.turns[0].content == "Tell me a long story"
    assert again.chat.chat_list.currentIndex().row() == 0
    again.close()


# ---------------------------------------------------------------- 11: a new chat's documents
def test_a_new_chat_starts_without_the_last_chats_documents(qtbot, window: MainWindow) -> None:
    chat = window.chat
    chat.set_collections(["handbook"])
    chat.collection_box.setCurrentIndex(chat.collection_box.findData("handbook"))
    assert chat.current is not None and chat.current.collection == "handbook"
    chat.input.setPlainText("hello")
    with qtbot.waitSignal(chat.generation_finished, timeout=30_000):
        chat.current.max_tokens = 4
        chat.current.collection = ""  # answered without retrieval: no index exists here
        qtbot.mouseClick(chat.send_button, LEFT)
    chat.current.collection = "handbook"
    grounded = chat.current
    qtbot.mouseClick(chat.new_button, LEFT)
    assert chat.current is not grounded
    assert chat.current.collection == "" and chat.collection_box.currentIndex() == 0
    assert chat.collection_box.currentText() == "No documents"
    assert chat.current.model == grounded.model  # the model still carries over


# ---------------------------------------------------------------- 13: stopped at once
class _StopsAtOnce:
    """A chat model whose second answer is stopped by the user at once: one hidden token
    (a thinking model's opening tag), then Stop, as the engine reports it (1 token, the
    time of one sampling step)."""

    def __init__(self) -> None:
        import threading

        from tests.chat.scripted import Scripted

        self.scripted = Scripted("First answer.", "Third answer.")
        self.waiting = threading.Event()
        self.asked = 0

    def stream_chat(self, model, call, cancel=None):
        from desktop.engine._types import Delta, Timings, Usage

        self.asked += 1
        if self.asked != 2:
            yield from self.scripted.stream_chat(model, call, cancel)
            return
        yield Delta(text="")
        self.waiting.set()
        assert cancel is not None
        cancel.wait()
        yield Delta(
            finish_reason="cancelled", usage=Usage(35, 1), timings=Timings(generation_s=5e-5)
        )


def test_an_answer_stopped_at_once_says_one_token_no_speed_and_stays_a_version(
    qtbot, window: MainWindow
) -> None:
    from tests.ui.conftest import send

    engine = _StopsAtOnce()
    chat = window.chat
    chat.core.streamer = engine
    send(qtbot, window, "Question?")
    qtbot.mouseClick(chat._bubbles[-1].regenerate_button, LEFT)
    qtbot.waitUntil(engine.waiting.is_set, timeout=10_000)
    with qtbot.waitSignal(chat.generation_finished, timeout=30_000):
        qtbot.mouseClick(chat.stop_button, LEFT)
    stopped = chat._bubbles[-1]
    assert stopped.version_label.text() == "2/2"
    footer = stopped.footer.text()
    assert "1 token ·" in footer and "1 tokens" not in footer and "tok/s" not in footer
    assert "stopped" in footer
    with qtbot.waitSignal(chat.generation_finished, timeout=30_000):
        qtbot.mouseClick(stopped.regenerate_button, LEFT)
    answer = chat._bubbles[-1]
    assert answer.shown_markdown == "Third answer."
    assert answer.version_label.text() == "3/3"  # a version added, none replaced


# ---------------------------------------------------------------- 14: line breaks
def test_single_line_breaks_in_an_answer_stay_line_breaks(qtbot, window: MainWindow) -> None:
    from PySide6.QtGui import QTextDocument

    from tests.chat.scripted import Scripted
    from tests.ui.conftest import send

    window.chat.core.streamer = Scripted("Roses are red,\nviolets are blue.\n\nA new verse.")
    send(qtbot, window, "A poem?")
    shown = QTextDocument()
    shown.setHtml(window.chat._bubbles[-1].body_html())
    lines = [line.strip() for line in shown.toPlainText().splitlines() if line.strip()]
    # As the copied text has them: two lines, then the next paragraph.
    assert lines == ["Roses are red,", "violets are blue.", "A new verse."]


# ---------------------------------------------------------------- 15: the status bar
def test_the_status_bar_claims_no_network_and_never_names_the_embedding_model(
    qtbot, window: MainWindow, tiny_embed: Path
) -> None:
    from tests.ui.conftest import send

    window.show()
    status = window.offline_status
    assert not status.isVisibleTo(window) and "Online" not in status.text()  # no check made
    embedder = window.models.import_file(tiny_embed)
    window.context.scheduler.embed(embedder, ["indexing a folder"])  # what indexing loads
    window.refresh_status()
    assert window.model_status.text() == "No chat model loaded"
    send(qtbot, window, "hello", max_tokens=4)
    window.refresh_status()
    assert window.model_status.text() == "Model: tiny-chat"
    window.context.apply_settings({"offline": True})
    window.refresh_status()
    assert status.isVisibleTo(window) and status.text() == "● Offline mode"


# ---------------------------------------------------------------- 16: key rows
def test_key_rows_say_when_in_local_words_and_count_only_answered_calls(
    qtbot, chinese, tiny_chat: Path, context: AppContext
) -> None:
    from datetime import datetime

    port = _free_port()
    context.apply_settings({"server.port": port})
    win = MainWindow(context)
    qtbot.addWidget(win)
    win.resize(1024, 700)
    win.show()
    win.show_page("server")
    win.models.import_file(tiny_chat)
    panel = win.server
    clock = context.key_store.clock
    made_at = clock()
    key = panel.create_key("a-rather-long-client-name-for-the-laptop")
    # A scope long enough to need wrapping at 1024 px.
    context.key_store.set_scope(
        "a-rather-long-client-name-for-the-laptop",
        models=[f"some-model-with-a-long-name-{n}" for n in range(6)],
        endpoints=["chat", "embeddings", "documents"],
        rate_per_min=30,
    )
    panel.keys_changed_on_disk()
    row = panel.key_list.item(0)
    assert "从未使用" in row.text() and "刚刚" in row.text()  # translated, "just now"
    assert "T" not in row.text().split("\n")[1].split("·")[0]  # no raw ISO timestamp
    assert datetime.fromtimestamp(made_at).strftime("%Y-%m-%d %H:%M") in row.toolTip()
    bar = panel.key_list.horizontalScrollBar()
    assert not bar.isVisible() and bar.maximum() == 0  # wrapped, never scrolled sideways

    with qtbot.waitSignal(panel.state_changed, timeout=15_000):
        qtbot.mouseClick(panel.toggle, LEFT)
    url = panel.address.text()
    # A call the key's scope refuses (a model it may not use) is no use of the key.
    refused = httpx.post(
        f"{url}/chat/completions",
        headers={"Authorization": f"Bearer {key}"},
        json={"model": "tiny-chat", "messages": [{"role": "user", "content": "hi"}]},
    )
    assert refused.status_code == 403
    qtbot.waitUntil(lambda: "403" in panel.log.toPlainText(), timeout=30_000)
    assert "从未使用" in panel.key_list.item(0).text()
    assert context.key_store.list()[0].last_used is None
    context.key_store.set_scope("a-rather-long-client-name-for-the-laptop")  # any model
    context.key_store.clock = lambda: clock() + 150  # two and a half minutes later
    answered = httpx.get(f"{url}/models", headers={"Authorization": f"Bearer {key}"})
    assert answered.status_code == 200
    qtbot.waitUntil(lambda: "从未使用" not in panel.key_list.item(0).text(), timeout=30_000)
    context.key_store.clock = lambda: clock() + 270  # two minutes after that use
    panel.keys_changed_on_disk()
    assert "上次使用 2 分钟前" in panel.key_list.item(0).text()
    with qtbot.waitSignal(panel.state_changed, timeout=15_000):
        qtbot.mouseClick(panel.toggle, LEFT)
    win.close()
    # The use is in the file at close: the next start shows the same time.
    again = build_context(policy=NoPolicy())
    used = again.key_store.list()[0].last_used
    assert used is not None and abs(datetime.fromisoformat(used).timestamp() - (made_at + 150)) < 5
    again.close()


# ---------------------------------------------------------------- 17: the New key dialog
@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_the_new_key_dialogs_models_hint_is_shown_whole(qtbot, qapp, language: str) -> None:
    from PySide6.QtWidgets import QStyle, QStyleOptionFrame

    from desktop.ui.common.look import install_translator

    translator = install_translator(qapp, language) if language != "en" else None
    try:
        win = MainWindow(build_context(policy=NoPolicy()))
        qtbot.addWidget(win)
        win.show()
        win.show_page("server")
        qtbot.mouseClick(win.server.new_key_button, LEFT)
        dialog = win.server.scope_dialog
        assert dialog is not None
        qtbot.waitExposed(dialog)
        field = dialog.models
        hint = field.placeholderText()
        assert (hint != "Any model; or model ids, comma-separated") == (language != "en")
        option = QStyleOptionFrame()
        field.initStyleOption(option)
        room = field.style().subElementRect(QStyle.SubElement.SE_LineEditContents, option, field)
        assert field.fontMetrics().horizontalAdvance(hint) <= room.width() - 4
        dialog.reject()
        win.close()
    finally:
        if translator is not None:
            qapp.removeTranslator(translator)


# ---------------------------------------------------------------- 19: Chinese documents
def test_chinese_documents_for_an_english_only_model_get_a_hint_for_bge_m3(
    qtbot, edgedesk_home: Path, tiny_embed: Path, tmp_path: Path
) -> None:
    from desktop.ui.documents.language_hint import lacks_chinese

    config = edgedesk_home / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.toml").write_text(f'embedding_model = "{tiny_embed}"\n')
    win = MainWindow(build_context(policy=NoPolicy()))
    qtbot.addWidget(win)
    win.show()
    win.show_page("documents")
    view = win.documents
    catalog = win.context.catalog
    # The catalog knows which models are English-only and which read Chinese.
    assert lacks_chinese(catalog, "bge-small-en-v1.5")
    assert not lacks_chinese(catalog, "bge-m3") and not lacks_chinese(catalog, "bge-large-zh-v1.5")
    chinese = tmp_path / "报告"  # a folder name is enough
    chinese.mkdir()
    (chinese / "notes.txt").write_text("Quarterly notes\n")
    text_only = tmp_path / "minutes"  # plain names, Chinese only inside a file
    text_only.mkdir()
    (text_only / "a.md").write_text("# Minutes\n\n会议纪要：下周发布。\n", encoding="utf-8")
    english = tmp_path / "english"
    english.mkdir()
    (english / "a.md").write_text("# Minutes\n\nRelease next week.\n")

    view.add("reports", [chinese], "bge-small-en-v1.5")  # not downloaded: offered first
    assert view.language_hint.isVisible()
    said = view.language_hint.text()
    assert "bge-small-en-v1.5 understands English only" in said and "bge-m3" in said
    view.add("minutes", [text_only], "bge-small-en-v1.5")
    assert view.language_hint.isVisible()
    view.add("english", [english], "bge-small-en-v1.5")
    assert not view.language_hint.isVisible()  # nothing to say about English documents
    view.add("multi", [chinese], "bge-m3")
    assert not view.language_hint.isVisible()  # the multilingual model: no hint
    win.close()


# ---------------------------------------------------------------- 9: Settings fits
@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_settings_fits_the_screen_and_save_stays_put_as_fields_appear(
    qtbot, qapp, language: str
) -> None:
    from desktop.ui.common.look import install_translator

    translator = install_translator(qapp, language) if language != "en" else None
    try:
        context = build_context(cli_settings={"encrypt_at_rest": False}, policy=NoPolicy())
        win = MainWindow(context)
        qtbot.addWidget(win)
        win.show()
        dialog = win.open_settings()
        qtbot.waitExposed(dialog)
        screen = dialog.screen().availableGeometry()
        assert dialog.height() <= screen.height() - 40  # the title bar stays on the screen
        save = dialog.buttons.button(dialog.buttons.StandardButton.Save)
        dialog.layout().activate()  # laid out at its first size, as the user sees it
        where = save.mapToGlobal(save.rect().center())
        size = dialog.size()
        assert dialog.encryption is not None
        dialog.encryption.check.setChecked(True)  # the passphrase fields appear
        dialog.encryption.passphrase.setText("a long passphrase")  # and its second field
        dialog.layout().activate()
        assert dialog.size() == size and save.mapToGlobal(save.rect().center()) == where
        assert dialog.encryption.again.isVisibleTo(dialog)
        # Every field can be reached: the content scrolls, nothing is cut off sideways.
        bar = dialog.scroller.horizontalScrollBar()
        assert bar.maximum() == 0
        dialog.scroller.ensureWidgetVisible(dialog.hardware)
        assert dialog.hardware.visibleRegion().boundingRect().height() > 0
        dialog.reject()
        win.close()
    finally:
        if translator is not None:
            qapp.removeTranslator(translator)


# ---------------------------------------------------------------- 8: the unlock dialog
@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_the_unlock_dialog_shows_its_text_and_a_red_error_whole(qtbot, qapp, language: str) -> None:
    from PySide6.QtGui import QColor

    from desktop.ui.common.look import apply_theme, install_translator
    from desktop.ui.settings.encryption import PassphraseDialog, passphrase_check

    first = build_context(cli_settings={"encrypt_at_rest": False}, policy=NoPolicy())
    first.chat_store.create_conversation("kept", "m")
    first.switch_encryption(True, passphrase="correct horse")
    first.close()
    assert first.data_lock is not None
    first.data_lock.release()
    translator = install_translator(qapp, language) if language != "en" else None
    try:
        context = build_context(policy=NoPolicy())
        apply_theme(qapp, "light")  # run_app applies the theme before it asks
        dialog = PassphraseDialog(passphrase_check(context))
        qtbot.addWidget(dialog)
        dialog.show()
        qtbot.waitExposed(dialog)
        qtbot.keyClicks(dialog.field, "wrong horse")
        dialog.accept()
        dialog.layout().activate()
        for label in (dialog.intro, dialog.problem):
            assert label.isVisible() and label.text()
            # Tall enough for every wrapped line at its width: nothing cut off.
            assert label.height() >= label.heightForWidth(label.width())
        image = dialog.problem.grab().toImage()
        reds = [
            QColor(image.pixel(x, y))
            for x in range(0, image.width(), 2)
            for y in range(image.height())
        ]
        assert any(c.red() > 150 and c.green() < 110 and c.blue() < 110 for c in reds)
        dialog.reject()
        context.close()
    finally:
        if translator is not None:
            qapp.removeTranslator(translator)


# ---------------------------------------------------------------- 5: a failed server's reason
def test_a_failed_tool_servers_whole_reason_and_log_are_shown_wrapped(
    qtbot, window: MainWindow, tmp_path: Path
) -> None:
    long_line = (
        "ImportError: This is mcp 2.x, whereas this server was written for mcp 1.x; "
        "install it with pip install 'mcp<2' in the server's own environment and try again"
    )
    script = tmp_path / "server.py"
    script.write_text(f"import sys\nsys.stderr.write({long_line!r} + '\\n')\nsys.exit(1)\n")
    window.resize(1024, 700)
    window.show_page("tools")
    page = window.tools
    form = page.open_form()
    form.name.setText("weather")
    form.command.setText(f'"{sys.executable}" "{script}"')
    assert form.save()
    qtbot.mouseClick(page.test_button, LEFT)
    qtbot.waitUntil(lambda: page.test_button.isEnabled(), timeout=60_000)
    row = _server_rows(window)["weather"]
    assert not page.details.isVisible()  # nothing selected yet
    page.tree.setCurrentItem(row)
    assert page.details.isVisible()
    shown = page.details.text()
    assert shown.startswith(f"weather: {row.text(1)}")  # the state, whole
    assert long_line in shown  # the log's line, whole (the column cuts it)
    assert page.details.height() >= page.details.heightForWidth(page.details.width())
    assert page.details.width() <= page.width()  # wrapped, not widening the screen
