"""Both themes draw what a keyboard user needs to see (issue 24, item 7).

Light: the highlighted item of a drop-down was white on white. Dark: a focused
drop-down looked like any other, and a checkbox's box was barely visible.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QCheckBox, QComboBox, QSpinBox, QVBoxLayout, QWidget

from desktop.ui.common.look import apply_theme

pytestmark = pytest.mark.qt


def _luminance(color: QColor) -> float:
    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return (
        0.2126 * channel(color.red())
        + 0.7152 * channel(color.green())
        + 0.0722 * channel(color.blue())
    )


def _contrast(a: QColor, b: QColor) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def _best_contrast(image: QImage, left: int, top: int, width: int, height: int) -> float:
    """How well the strongest mark in the area stands out from the area's background."""
    pixels = Counter(
        image.pixelColor(x, y).rgb()
        for y in range(top, min(top + height, image.height()))
        for x in range(left, min(left + width, image.width()))
    )
    background = QColor.fromRgb(pixels.most_common(1)[0][0])
    return max(_contrast(background, QColor.fromRgb(rgb)) for rgb in pixels)


@pytest.fixture(params=["light", "dark"])
def theme(request, qapp) -> Iterator[str]:
    apply_theme(qapp, request.param)
    yield request.param
    qapp.setStyleSheet("")


def test_the_highlighted_item_of_a_drop_down_is_readable(qtbot, theme: str) -> None:
    combo = QComboBox()
    qtbot.addWidget(combo)
    combo.addItems(["First model", "Second model", "Third model"])
    combo.resize(300, 30)
    combo.show()
    combo.showPopup()
    view = combo.view()
    view.setCurrentIndex(combo.model().index(1, 0))
    qtbot.waitUntil(view.isVisible, timeout=2000)
    rect = view.visualRect(combo.model().index(1, 0))
    image = view.grab().toImage()
    assert (
        _best_contrast(image, rect.left(), rect.top(), min(rect.width(), 200), rect.height()) >= 4.5
    ), theme
    combo.hidePopup()


def test_focus_shows_on_drop_downs_and_boxes_are_visible(qtbot, theme: str) -> None:
    panel = QWidget()
    qtbot.addWidget(panel)
    column = QVBoxLayout(panel)
    combo, other, box, spin = QComboBox(), QComboBox(), QCheckBox("Offline"), QSpinBox()
    for widget in (combo, other, box, spin):
        column.addWidget(widget)
    combo.addItem("Model")
    other.addItem("Model")
    panel.show()
    panel.activateWindow()
    qtbot.waitActive(panel)
    other.setFocus()
    qtbot.waitUntil(other.hasFocus, timeout=2000)
    unfocused = combo.grab().toImage()
    combo.setFocus()
    qtbot.waitUntil(combo.hasFocus, timeout=2000)
    assert combo.grab().toImage() != unfocused, f"{theme}: a focused drop-down looks the same"
    # The checkbox's box (left of its label) stands out from the panel.
    image = box.grab().toImage()
    assert _best_contrast(image, 0, 0, 20, image.height()) >= 3.0, theme
    # The spin box's arrows, on its right edge, are drawn in a visible colour.
    image = spin.grab().toImage()
    assert _best_contrast(image, image.width() - 18, 2, 16, image.height() - 4) >= 3.0, theme
