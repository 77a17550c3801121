"""Chatting as a user does: send, watch it stream, stop, regenerate, edit, switch chats."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtTest import QTest

from desktop.engine._types import ChatCall
from desktop.ui.shell.main_window import MainWindow
from tests.ui.conftest import send

pytestmark = pytest.mark.qt


def bodies(win: MainWindow) -> list[str]:
    return [bubble.shown_markdown for bubble in win.chat._bubbles]


def test_send_streams_the_answer_and_shows_its_statistics(qtbot, window: MainWindow) -> None:
    chat = window.chat
    seen: list[str] = []
    timer = QTimer()
    timer.timeout.connect(lambda: seen.append(bodies(window)[-1] if chat.is_generating else ""))
    timer.start(5)
    turn = send(qtbot, window, "hello", max_tokens=600)
    timer.stop()
    assert turn is not None and turn.content.strip()
    partial = {text for text in seen if text and text not in {"…", turn.content}}
    assert len(partial) >= 2, "the answer appeared all at once instead of streaming"
    assert all(turn.content.startswith(text) for text in partial)
    assert [t.role for t in chat.current.turns] == ["user", "assistant"]
    last = chat._bubbles[-1]
    assert last.shown_markdown == turn.content
    assert "600 tokens" in last.footer.text() and "tok/s" in last.footer.text()
    assert " · CPU only · " in last.footer.text()  # where it ran: this CPU build of llama.cpp
    assert chat.chats.data(chat.chats.index(0)) == "hello"  # titled from the question
    assert chat.send_button.isEnabled() and not chat.stop_button.isEnabled()


def test_stop_keeps_the_partial_answer(qtbot, window: MainWindow) -> None:
    chat = window.chat
    chat.current.max_tokens = 1900
    chat.input.setPlainText("tell me a long story")
    with qtbot.waitSignal(chat.generation_finished, timeout=30_000) as finished:
        chat.send()
        qtbot.waitUntil(lambda: bool(chat.current.turns[-1].content), timeout=20_000)
        QTest.keyClick(chat.input, Qt.Key.Key_Escape)  # Esc is the stop shortcut
    turn = finished.args[0]
    assert turn.finish_reason == "cancelled" and turn.content
    assert turn.usage.completion_tokens < 1900
    assert "stopped" in chat._bubbles[-1].footer.text()
    # Saved as stopped: a reopened chat and its export say so too.
    store = window.context.chat_store
    [conv] = store.list_conversations()
    saved = store.get_messages(conv.id)[-1]
    assert (saved.content, saved.finish_reason) == (turn.content, "cancelled")
    assert "*(stopped)*" in store.export_markdown([conv.id])


def test_stop_while_the_model_serves_someone_else_ends_the_answer_quietly(
    qtbot, window: MainWindow
) -> None:
    import threading

    from desktop.engine._types import GenerationParams, Message

    chat = window.chat
    scheduler = window.context.scheduler
    model = chat.current.model
    release = threading.Event()

    def ide_request(busy: threading.Event) -> None:
        stream = scheduler.stream_chat(
            model,
            ChatCall.of([Message("user", "long")], GenerationParams(max_tokens=4000)),
            release,
        )
        next(stream)
        busy.set()
        for _ in stream:
            pass

    def start_ide_request() -> threading.Thread:
        busy = threading.Event()  # e.g. an IDE's long request through the local server
        thread = threading.Thread(target=ide_request, args=(busy,))
        thread.start()
        assert busy.wait(20)
        return thread

    others = [start_ide_request()]
    [loaded] = [m for m in scheduler.loaded() if m.model_id == model]
    # Every slot of the model streams for the IDE, so the chat's request must wait.
    others += [start_ide_request() for _ in range(loaded.slots_total - 1)]
    chat.input.setPlainText("my question waits in line")
    with qtbot.waitSignal(chat.generation_finished, timeout=10_000) as finished:
        chat.send()
        qtbot.waitUntil(lambda: scheduler.queue_depth == 1, timeout=30_000)
        QTest.keyClick(chat.input, Qt.Key.Key_Escape)
    turn = finished.args[0]
    assert turn.finish_reason == "cancelled" and turn.content == ""
    assert "stopped" in chat._bubbles[-1].footer.text()
    assert scheduler.queue_depth == 0  # it left the line; the IDE's requests run on
    assert all(other.is_alive() for other in others)
    release.set()
    for other in others:
        other.join(20)


def test_regenerate_replaces_the_last_answer(qtbot, window: MainWindow) -> None:
    chat = window.chat
    first = send(qtbot, window, "hello")
    qtbot.waitUntil(chat._bubbles[-1].regenerate_button.isVisible, timeout=2000)
    assert not chat._bubbles[0].regenerate_button.isVisible()  # only under the last answer
    with qtbot.waitSignal(chat.generation_finished, timeout=30_000) as finished:
        qtbot.mouseClick(chat._bubbles[-1].regenerate_button, Qt.MouseButton.LeftButton)
    second = finished.args[0]
    assert second is not first and second.usage is not None
    assert [t.role for t in chat.current.turns] == ["user", "assistant"]
    assert chat.current.turns[-1] is second


def test_edit_and_resend_replaces_the_message_and_what_followed(qtbot, window: MainWindow) -> None:
    chat = window.chat
    send(qtbot, window, "first question")
    send(qtbot, window, "second question")
    assert len(chat.current.turns) == 4
    qtbot.mouseClick(chat._bubbles[0].edit_button, Qt.MouseButton.LeftButton)
    assert chat.input.toPlainText() == "first question"
    chat.input.setPlainText("first question, edited")
    with qtbot.waitSignal(chat.generation_finished, timeout=30_000):
        QTest.keyClick(chat.input, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    turns = chat.current.turns
    assert [t.role for t in turns] == ["user", "assistant"]
    assert turns[0].content == "first question, edited"
    assert bodies(window)[0] == "first question, edited"


def test_switching_chats_shows_each_transcript_and_generation_continues(
    qtbot, window: MainWindow
) -> None:
    chat = window.chat
    send(qtbot, window, "about cats")
    first = chat.current
    chat.current.max_tokens = 400
    chat.input.setPlainText("more about cats")
    with qtbot.waitSignal(chat.generation_finished, timeout=30_000):
        chat.send()
        qtbot.mouseClick(chat.new_button, Qt.MouseButton.LeftButton)
        assert chat.current is not first and bodies(window) == []
    assert chat.current is not first and bodies(window) == []
    assert first.turns[-1].content and first.turns[-1].finish_reason == "length"
    row = chat._filter.mapFromSource(chat.chats.index(chat.chats.row_of(first)))
    chat.chat_list.setCurrentIndex(row)
    assert chat.current is first
    assert bodies(window)[0] == "about cats" and bodies(window)[2] == "more about cats"
    assert len(bodies(window)) == 4


def test_per_chat_model_and_settings_are_kept(qtbot, window: MainWindow) -> None:
    chat = window.chat
    chat.temperature.setValue(0.2)
    chat.system_prompt.setText("Be brief.")
    chat.system_prompt.textEdited.emit("Be brief.")
    chat.ephemeral.setChecked(True)
    first = chat.current
    chat.new_chat()
    chat.temperature.setValue(1.3)
    assert chat.system_prompt.text() == "" and not chat.ephemeral.isChecked()
    chat.select(first)
    assert chat.temperature.value() == pytest.approx(0.2)
    assert chat.system_prompt.text() == "Be brief." and chat.ephemeral.isChecked()
    assert first.messages()[0].content == "Be brief."
    assert chat.model_box.currentData() == first.model == "tiny-chat"


def test_a_chat_without_a_model_explains_what_to_do(qtbot, context) -> None:
    win = MainWindow(context)
    qtbot.addWidget(win)
    win.chat.input.setPlainText("hello")
    win.chat.send()
    assert not win.chat.is_generating
    assert "Choose a model" in win.chat.notice.text()
    win.close()


def test_ctrl_n_starts_a_new_chat(qtbot, window: MainWindow) -> None:
    window.chat.current.system_prompt = "Be brief."  # set up: not an empty chat to reuse
    before = window.chat.chats.rowCount()
    QTest.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert window.chat.chats.rowCount() == before + 1
    assert window.chat.current.turns == [] and window.chat.current.model == "tiny-chat"


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Records the index of every message bubble the chat screen makes."""
    import desktop.ui.chat.transcript as transcript

    indexes: list[int] = []

    class Counted(transcript.MessageWidget):  # type: ignore[misc]
        def __init__(self, index: int, *args, **kwargs) -> None:
            indexes.append(index)
            super().__init__(index, *args, **kwargs)

    monkeypatch.setattr(transcript, "MessageWidget", Counted)
    return indexes


def test_sending_in_a_long_chat_makes_only_the_two_new_bubbles(
    qtbot, window: MainWindow, made: list[int]
) -> None:
    # Re-rendering every earlier answer (Markdown, highlighted code) froze the window for
    # hundreds of milliseconds per message in a long chat.
    from desktop.chat import Turn

    chat = window.chat
    for number in range(10):
        chat.current.turns += [
            Turn("user", f"question {number}"),
            Turn("assistant", f"```python\nx = {number}\n```"),
        ]
    chat._rebuild_transcript()
    made.clear()
    chat.current.max_tokens = 24
    chat.input.setPlainText("one more")
    with qtbot.waitSignal(chat.generation_finished, timeout=30_000) as finished:
        qtbot.mouseClick(chat.send_button, Qt.MouseButton.LeftButton)
        assert made == [20, 21]  # the question and the (streaming) answer, nothing else
    assert made == [20, 21]  # finishing the answer makes no bubble
    assert len(chat._bubbles) == 22 and bodies(window)[20] == "one more"
    assert bodies(window)[-1] == finished.args[0].content
    assert "tok/s" in chat._bubbles[-1].footer.text()
    qtbot.waitUntil(chat._bubbles[-1].regenerate_button.isVisible, timeout=2000)
    assert not any(b.regenerate_button.isVisible() for b in chat._bubbles[:-1])


def test_regenerate_remakes_only_the_answer(qtbot, window: MainWindow, made: list[int]) -> None:
    chat = window.chat
    send(qtbot, window, "first")
    send(qtbot, window, "second")
    made.clear()
    with qtbot.waitSignal(chat.generation_finished, timeout=30_000) as finished:
        qtbot.mouseClick(chat._bubbles[-1].regenerate_button, Qt.MouseButton.LeftButton)
    assert made == [3]
    assert bodies(window)[:3] == ["first", chat.current.turns[1].content, "second"]
    assert bodies(window)[3] == finished.args[0].content and len(bodies(window)) == 4


def test_new_chat_delete_and_choosing_a_model_build_the_transcript_at_most_once(
    qtbot, window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    chat = window.chat
    send(qtbot, window, "keep me")
    built: list[object] = []
    rebuild = chat._rebuild_transcript
    monkeypatch.setattr(
        chat, "_rebuild_transcript", lambda: (built.append(chat.current), rebuild())
    )
    first = chat.current
    fresh = chat.new_chat()
    assert built == [fresh] and chat.current is fresh
    built.clear()
    chat.delete_current()
    assert built == [first] and bodies(window)[0] == "keep me"
    built.clear()
    window.use_model("tiny-chat")
    assert built == [] and chat.model_box.currentData() == "tiny-chat"
    assert bodies(window)[0] == "keep me"


def test_a_window_chat_counts_as_client_edgedesk_without_its_words(
    qtbot, window: MainWindow
) -> None:
    turn = send(qtbot, window, "remember zanzibarquokka", max_tokens=8)
    assert turn is not None
    context = window.context
    assert context.usage_recorder.flush()
    rows = context.usage_store.rows()
    assert len(rows) == 1
    row = rows[0]
    assert (row.client, row.key_name, row.route, row.status) == ("EdgeDesk", None, "window", 200)
    assert row.model == window.chat.current.model and row.completion_tokens > 0
    assert row.ttft_ms is not None and row.total_ms >= row.ttft_ms
    assert "zanzibarquokka" not in repr(row)
