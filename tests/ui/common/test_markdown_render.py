"""Answers render as Markdown with code coloured per language, and nothing a model writes
becomes markup, an image or a request to the network."""

from __future__ import annotations

import re

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QImage

import desktop.ui.common.markdown_render as markdown_render
from desktop.chat import Turn
from desktop.ui.chat.message import MessageWidget
from desktop.ui.common.markdown_render import MarkdownRenderer, code_blocks

PYTHON = '```python\ndef greet():\n    return "hello"\n```\n'
_SPAN = re.compile(r'<span style="([^"]*)">([^<]*)</span>')


def colour_of(html: str, text: str) -> str:
    """The CSS colour of the first span whose text is ``text``."""
    for style, content in _SPAN.findall(html):
        if content == text:
            match = re.search(r"color: *(#[0-9a-fA-F]+)", style)
            assert match, style
            return match.group(1).lower()
    raise AssertionError(f"no span around {text!r} in {html}")


def test_a_python_fence_colours_keywords_and_strings_differently() -> None:
    html = MarkdownRenderer("light").render("Here:\n\n" + PYTHON)
    keyword, string = colour_of(html, "def"), colour_of(html, '"hello"')
    assert keyword != string
    assert "<pre" in html and "<p>Here:</p>" in html


def test_a_fence_without_a_language_is_still_a_code_block() -> None:
    html = MarkdownRenderer("light").render("```\nls -la | wc\n```\n")
    pre = html[html.index("<pre") : html.index("</pre>")]
    assert "ls -la | wc" in pre and '<span style="color: #' not in pre
    assert "copy:0" in html


def test_an_unknown_language_falls_back_to_plain_code() -> None:
    html = MarkdownRenderer("dark").render("```no-such-language\nx := 1\n```\n")
    assert "x := 1" in html and "<pre" in html


def test_raw_html_and_images_from_the_model_never_become_markup() -> None:
    answer = (
        'Hi <script>alert(1)</script> <img src="http://evil.test/a.png">\n\n'
        "![a cat](http://evil.test/cat.png) [site](http://evil.test/)\n\n"
        '<iframe src="http://evil.test"></iframe>\n\n'
        "```html\n<script>steal()</script>\n```\n"
    )
    html = MarkdownRenderer("light").render(answer).lower()
    for tag in ("<script", "<img", "<iframe"):
        assert tag not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "cat.png" not in html and "[a cat]" in html  # an image is shown as its alt text
    assert "steal()" in html


@pytest.mark.qt
def test_markup_in_the_reasoning_is_shown_as_text(qtbot) -> None:
    reasoning = '<b>bold</b><img src="http://x/y.png"><table><tr><td>t</td></tr></table>'
    bubble = MessageWidget(0, Turn("assistant", "Answer", reasoning=reasoning), last=True)
    qtbot.addWidget(bubble)
    assert bubble.reasoning.textFormat() == Qt.TextFormat.PlainText
    assert bubble.reasoning.text() == reasoning


def test_an_unterminated_fence_renders_as_highlighted_code() -> None:
    partial = 'Try this:\n\n```python\ndef greet():\n    return "hel'
    html = MarkdownRenderer("light").render(partial)
    assert "<pre" in html and colour_of(html, "def")
    assert code_blocks(partial) == ['def greet():\n    return "hel']


def test_light_and_dark_themes_use_different_palettes() -> None:
    light, dark = (MarkdownRenderer(theme).render(PYTHON) for theme in ("light", "dark"))
    assert colour_of(light, "def") != colour_of(dark, "def")
    backgrounds = [re.search(r'bgcolor="(#[0-9a-fA-F]+)"', html) for html in (light, dark)]
    assert backgrounds[0] and backgrounds[1]
    assert backgrounds[0].group(1) != backgrounds[1].group(1)


def test_finished_blocks_are_not_highlighted_again_while_the_answer_grows(monkeypatch) -> None:
    calls: list[str] = []
    real = markdown_render.highlight

    def counting(code, lexer, formatter):
        calls.append(code)
        return real(code, lexer, formatter)

    monkeypatch.setattr(markdown_render, "highlight", counting)
    renderer = MarkdownRenderer("light")
    answer = PYTHON + "\nAnd in JS:\n\n```js\nlet x"
    renderer.render(answer)
    renderer.render(answer + " = 1;")
    renderer.render(answer + " = 1;\n")
    assert [c for c in calls if "greet" in c] == ['def greet():\n    return "hello"']
    # The growing block once per new text; a trailing newline does not change its code.
    assert calls[1:] == ["let x", "let x = 1;"]


def test_inline_code_tables_and_strikethrough_render() -> None:
    html = MarkdownRenderer("light").render("`x` ~~old~~\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
    assert "<code" in html and "<s>old</s>" in html and "<td>2</td>" in html


# ------------------------------------------------------------------ the widget
def streamed(qtbot, answer: str, theme: str = "light", step: int = 7) -> MessageWidget:
    """A bubble refreshed as ``answer`` arrives a few characters at a time, as the view does."""
    turn = Turn("assistant", "")
    bubble = MessageWidget(0, turn, last=True, theme=theme)
    qtbot.addWidget(bubble)
    bubble.resize(640, 400)
    bubble.show()
    for end in range(step, len(answer) + step, step):
        turn.content = answer[:end]
        bubble.refresh()
    return bubble


def _pixels_near(image: QImage, colour: QColor, tolerance: int = 40) -> int:
    """How many pixels of ``image`` are within ``tolerance`` (sum over R, G, B) of ``colour``."""
    rgb = image.convertToFormat(QImage.Format.Format_RGB888)
    pixels = np.frombuffer(rgb.constBits(), np.uint8, rgb.sizeInBytes())
    rows = pixels.reshape(rgb.height(), rgb.bytesPerLine())[:, : rgb.width() * 3]
    target = np.array([colour.red(), colour.green(), colour.blue()], np.int32)
    distance = np.abs(rows.reshape(rgb.height(), rgb.width(), 3).astype(np.int32) - target)
    return int((distance.sum(axis=2) < tolerance).sum())


@pytest.mark.qt
def test_a_streamed_answer_shows_coloured_code(qtbot) -> None:
    bubble = streamed(qtbot, "Sure:\n\n" + PYTHON + "\nDone.")
    html = bubble.body_html()
    keyword = colour_of(html, "def")
    assert keyword != colour_of(html, '"hello"')
    assert bubble.copy_code_button.isVisibleTo(bubble)
    # Qt's rich text really paints the keyword's colour (it supports only some CSS).
    qtbot.wait(10)
    image = bubble.grab().toImage()
    assert _pixels_near(image, QColor(keyword)) > 10
    plain = streamed(qtbot, "Sure:\n\n```\ndef greet():\n    return 1\n```\n")
    assert _pixels_near(plain.grab().toImage(), QColor(keyword)) == 0


@pytest.mark.qt
def test_each_code_block_has_its_own_copy_link(qtbot) -> None:
    answer = "One:\n\n```sh\nls\n```\n\nTwo:\n\n```python\nprint(2)\n```\n\nThree:\n\n```\nend"
    bubble = streamed(qtbot, answer)
    clipboard = QGuiApplication.clipboard()
    part = next(p for p in bubble.parts if "copy:1" in p.text())
    part.linkActivated.emit("copy:1")
    assert clipboard.text() == "print(2)"
    part.linkActivated.emit("copy:2")
    assert clipboard.text() == "end"  # the block still streaming counts too
    part.linkActivated.emit("http://evil.test/")  # a model's link: nothing happens
    part.linkActivated.emit("copy:9")
    assert clipboard.text() == "end"
    assert not any(p.openExternalLinks() for p in bubble.parts)
    bubble.copy_code_button.click()
    assert clipboard.text() == "ls\n\nprint(2)\n\nend"


@pytest.mark.qt
def test_only_the_growing_part_of_a_streaming_answer_is_set_again(qtbot) -> None:
    bubble = streamed(qtbot, "Intro.\n\n" + PYTHON + "\nThen more")
    texts = [part.text() for part in bubble.parts if part.isVisibleTo(bubble)]
    assert len(texts) == 3  # prose, the code block, prose
    set_again: list[int] = []

    def recorder(number: int):
        return lambda _text: set_again.append(number)

    for number, part in enumerate(bubble.parts):
        part.setText = recorder(number)
    bubble._turn.content += " text."
    bubble.refresh()
    assert set_again == [2]


@pytest.mark.qt
def test_the_window_colours_code_for_the_chosen_theme(qtbot, window) -> None:
    chat = window.chat
    chat.current.turns.append(Turn("assistant", PYTHON))
    chat.set_theme("light")
    chat._rebuild_transcript()
    light = colour_of(chat._bubbles[-1].body_html(), "def")
    chat.set_theme("dark")
    assert colour_of(chat._bubbles[-1].body_html(), "def") != light
