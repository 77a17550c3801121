"""The rich-text parts of an answer: as tall as their text, never scrolling themselves."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QTextCursor, QWheelEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QTextBrowser, QWidget

from desktop.ui.common.rich_text import RichTextPart

pytestmark = pytest.mark.qt


def test_height_follows_the_text_and_nothing_is_cut(qtbot) -> None:
    part = RichTextPart()
    qtbot.addWidget(part)
    part.resize(400, 10)
    part.show()
    part.setText("<p>one line</p>")
    short = part.height()
    part.setText("<p>" + "many words wrap onto more lines " * 40 + "</p>")
    qtbot.waitUntil(lambda: part.height() > 4 * short)
    assert part.verticalScrollBar().maximum() == 0  # all of it is shown, no inner scroll
    tall = part.height()
    part.resize(200, tall)  # narrower: more lines, so taller again, still nothing cut
    qtbot.waitUntil(lambda: part.height() > tall)
    assert part.verticalScrollBar().maximum() == 0


def test_links_only_report_and_never_navigate(qtbot) -> None:
    part = RichTextPart()
    qtbot.addWidget(part)
    part.setText('<p><a href="http://example.com/x">site</a></p>')
    part.resize(300, 40)
    part.show()
    qtbot.waitExposed(part)
    inside = QTextCursor(part.document())
    inside.setPosition(2)  # between "si" and "te": on the link
    link = part.cursorRect(inside).center()
    with qtbot.waitSignal(part.linkActivated) as clicked:
        QTest.mouseClick(part.viewport(), Qt.MouseButton.LeftButton, pos=link)
    assert clicked.args == ["http://example.com/x"]
    assert part.source().isEmpty() and "site" in part.toPlainText()  # no navigation


def _wheel_down(widget: QWidget) -> QWheelEvent:
    event = QWheelEvent(
        QPointF(10, 10),
        QPointF(widget.mapToGlobal(QPoint(10, 10))),
        QPoint(0, 0),
        QPoint(0, -120),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(widget, event)
    return event


def test_the_mouse_wheel_is_left_to_the_transcript(qtbot) -> None:
    # An ignored wheel event goes on to the parent, the transcript's scroll area (Qt does
    # that for real input); a plain QTextBrowser would take it and the transcript would
    # stop scrolling whenever the pointer is over an answer.
    part, plain = RichTextPart(), QTextBrowser()
    for browser in (part, plain):
        qtbot.addWidget(browser)
        browser.setHtml("<p>" + "scroll me " * 400 + "</p>")
        browser.resize(300, 120)
        browser.show()
    assert not _wheel_down(part.viewport()).isAccepted()
    assert _wheel_down(plain.viewport()).isAccepted()
