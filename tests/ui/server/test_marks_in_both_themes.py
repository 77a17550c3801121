"""Buttons and boxes look like what they do, in the light and the dark look.

The last walk of the real window found a ticked box drawn as a plain blue square (the
styled indicator drew no tick) and a disabled Remove… or Revoke still red, reading as a
button that acts; and Edit scope… and Revoke enabled with no key to act on. Walking it
again, the dark look drew every second key's row white under light text.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QCheckBox, QPushButton, QStyle, QStyleOptionButton

from desktop.root.context import AppContext
from desktop.ui.common.look import apply_theme
from desktop.ui.shell.main_window import MainWindow

pytestmark = pytest.mark.qt


@pytest.fixture(params=["light", "dark"])
def theme(request, qapp) -> Iterator[str]:
    apply_theme(qapp, request.param)
    yield request.param
    qapp.setStyleSheet("")


def _red_pixels(button: QPushButton) -> int:
    """How many pixels of the button are drawn in the Danger red (its text)."""
    image = button.grab().toImage()
    return sum(
        1
        for y in range(image.height())
        for x in range(image.width())
        if (c := image.pixelColor(x, y)).red() - max(c.green(), c.blue()) > 40
    )


def _indicator(box: QCheckBox) -> tuple[QImage, list[tuple[int, int]]]:
    """The box's picture and the pixels inside its indicator (its border left out)."""
    option = QStyleOptionButton()
    box.initStyleOption(option)
    rect = box.style().subElementRect(QStyle.SubElement.SE_CheckBoxIndicator, option, box)
    inner = rect.adjusted(3, 3, -3, -3)
    image = box.grab().toImage()
    return image, [
        (x, y)
        for y in range(inner.top(), inner.bottom() + 1)
        for x in range(inner.left(), inner.right() + 1)
    ]


def _filled(image: QImage, inside: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The pixels drawn in the accent blue (a ticked box's fill)."""
    return [p for p in inside if (c := image.pixelColor(*p)).blue() - c.red() > 80]


def test_a_ticked_box_shows_its_tick(qtbot, theme: str, context: AppContext) -> None:
    win = MainWindow(context)
    qtbot.addWidget(win)
    win.show()
    win.show_page("server")
    dialog = win.server._ask_key()  # the New key dialog: its endpoint boxes start ticked
    qtbot.waitUntil(dialog.isVisible, timeout=5000)
    ticked, unticked = dialog.endpoints["chat"], dialog.endpoints["embeddings"]
    unticked.setChecked(False)
    assert ticked.isChecked()
    image, inside = _indicator(ticked)
    blue = _filled(image, inside)
    tick = [p for p in inside if image.pixelColor(*p).lightness() > 225]
    assert len(blue) > 10, f"{theme}: a ticked box is filled with the accent colour"
    assert len(tick) >= 6, f"{theme}: a ticked box has no tick mark on its fill"
    # Unticked, the same box has neither the fill nor the mark's colour on a fill.
    image, inside = _indicator(unticked)
    assert _filled(image, inside) == [], theme
    dialog.reject()
    win.close()


def test_disabled_danger_buttons_are_not_red_and_key_buttons_need_a_key(
    qtbot, theme: str, context: AppContext
) -> None:
    win = MainWindow(context)
    qtbot.addWidget(win)
    win.resize(1366, 768)
    win.show()
    win.show_page("server")
    panel = win.server
    # No key yet: nothing for Edit scope… or Revoke to act on, and it shows.
    assert "No API keys" in panel.key_list.item(0).text()
    assert not panel.edit_button.isEnabled() and not panel.revoke_button.isEnabled()
    assert panel.revoke_button.toolTip() == "Select a key in the list first."
    assert _red_pixels(panel.revoke_button) == 0, f"{theme}: a disabled Revoke reads red"
    assert panel.create_key("ide")
    panel.key_list.setCurrentRow(0)
    assert panel.edit_button.isEnabled() and panel.revoke_button.isEnabled()
    assert panel.revoke_button.toolTip() == ""
    assert _red_pixels(panel.revoke_button) > 10, f"{theme}: an enabled Revoke is red"
    qtbot.mouseClick(panel.revoke_button, Qt.MouseButton.LeftButton)
    assert "No API keys" in panel.key_list.item(0).text()
    assert not panel.edit_button.isEnabled() and not panel.revoke_button.isEnabled()

    # The built-in documents tools cannot be removed: Remove… is off, looks off, says why.
    win.show_page("tools")
    page = win.tools
    builtin = page.tree.topLevelItem(0)
    assert builtin.text(0) == "Built-in (documents)"
    for row in (builtin, builtin.child(0)):
        page.tree.setCurrentItem(row)
        assert not page.remove_button.isEnabled() and not page.edit_button.isEnabled()
        assert "cannot be removed" in page.remove_button.toolTip()
        assert "built-in" in page.remove_button.toolTip()
        assert _red_pixels(page.remove_button) == 0, f"{theme}: a disabled Remove… reads red"
    # Nor is there an "Always" answer to forget.
    assert not page.forget_button.isEnabled()
    win.close()


def _luminance(color: QColor) -> float:
    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return (
        0.2126 * channel(color.red())
        + 0.7152 * channel(color.green())
        + 0.0722 * channel(color.blue())
    )


def _text_contrast(image: QImage, left: int, top: int, width: int, height: int) -> float:
    """How well the strongest mark in the area (its text) stands out from its background."""
    pixels = Counter(
        image.pixelColor(x, y).rgb()
        for y in range(top, min(top + height, image.height()))
        for x in range(left, min(left + width, image.width()))
    )
    background = _luminance(QColor.fromRgb(pixels.most_common(1)[0][0]))
    return max(
        (max(background, lum) + 0.05) / (min(background, lum) + 0.05)
        for lum in (_luminance(QColor.fromRgb(rgb)) for rgb in pixels)
    )


def test_every_key_row_reads_in_both_themes(qtbot, theme: str, context: AppContext) -> None:
    win = MainWindow(context)
    qtbot.addWidget(win)
    win.resize(1366, 768)
    win.show()
    win.show_page("server")
    panel = win.server
    assert panel.create_key("ide") and panel.create_key("walker")
    keys = panel.key_list
    assert keys.count() == 2
    image = keys.viewport().grab().toImage()
    for row in range(keys.count()):
        rect = keys.visualItemRect(keys.item(row))
        # The rows alternate, a key's two lines as one: each row's text still reads.
        inside = rect.adjusted(1, 1, -1, -1)  # this row only, not a pixel of the next
        contrast = _text_contrast(
            image, inside.left(), inside.top(), min(inside.width(), 300), inside.height()
        )
        assert contrast >= 4.5, f"{theme}: key row {row} reads {contrast:.1f}:1"
    win.close()
