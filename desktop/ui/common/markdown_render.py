"""Chat Markdown to Qt rich-text HTML, code fences coloured by Pygments; no raw HTML passes.

Pure Python (no Qt): the message widget feeds the result to a ``QLabel`` in RichText mode.
Qt's rich text understands a subset of HTML 4 with inline CSS only, so colours are inline
``style`` attributes (Pygments ``noclasses``) and boxes are one-cell tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token as MdToken
from markdown_it.utils import EnvType, OptionsDict
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.lexers.special import TextLexer
from pygments.styles import get_style_by_name
from pygments.token import Token
from pygments.util import ClassNotFound

COPY_SCHEME = "copy:"  # anchors ``copy:N`` ask the widget to copy the N-th code block


@dataclass(frozen=True)
class Palette:
    """The colours of one app theme: Pygments style, code box, inline code and links."""

    style: str
    text: str
    border: str
    inline_background: str
    link: str
    muted: str
    rule: str = "#9aa1ad"  # table borders: visible on the bubble (border was too faint)


# Chosen to sit on the bubbles of resources/styles/{light,dark}.qss.
PALETTES = {
    "light": Palette("default", "#1f2328", "#e1e4ea", "#eef0f4", "#2f5bd8", "#6b7280"),
    "dark": Palette("one-dark", "#e3e6eb", "#3a3f49", "#2f333b", "#8fb0ff", "#8c93a0", "#6b7280"),
}


def _parser() -> MarkdownIt:
    # html=False: raw HTML from the model is shown as text, never interpreted.
    # breaks=True: a single line break in an answer is a line break on screen, as in the
    # copied text (CommonMark would join the lines into one paragraph line).
    return MarkdownIt("commonmark", {"html": False, "breaks": True}).enable(
        ["table", "strikethrough"]
    )


def code_blocks(markdown: str) -> list[str]:
    """The contents of the fenced code blocks in ``markdown`` (an open fence counts)."""
    return [t.content.rstrip("\n") for t in _parser().parse(markdown) if t.type == "fence"]


class MarkdownRenderer:
    """Renders chat Markdown for one theme; reuses the highlighting of unchanged blocks."""

    def __init__(self, theme: str, *, copy_label: str = "Copy") -> None:
        self.palette = PALETTES.get(theme, PALETTES["light"])
        self._copy_label = copy_label
        style = get_style_by_name(self.palette.style)
        self._background = style.background_color
        colour = style.style_for_token(Token.Text)["color"]  # hex without "#", or None
        self._foreground = f"#{colour}" if colour else self.palette.text
        self._formatter: HtmlFormatter[str] = HtmlFormatter(
            style=self.palette.style, noclasses=True, nowrap=True
        )
        self._lexers: dict[str, Lexer] = {}
        # Highlighted HTML by (language, code): only blocks of the latest render are kept,
        # so while an answer streams the finished blocks cost nothing and memory stays flat.
        self._cache: dict[tuple[str, str], str] = {}
        self._used: dict[tuple[str, str], str] = {}
        self.code: list[str] = []  # the fenced blocks of the latest render, copy:N indexes it
        self._md = _parser()
        assert isinstance(self._md.renderer, RendererHTML)
        self._html: RendererHTML = self._md.renderer
        # Any: markdown-it render rules, bound methods of differing signatures
        rules: dict[str, Any] = {
            "fence": self._fence,
            "code_block": self._code_block,
            "code_inline": self._code_inline,
            "image": self._image,
            "link_open": self._link_open,
            "table_open": self._table_open,
        }
        # Straight into the table: add_render_rule would rebind our methods to the renderer.
        self._html.rules.update(rules)

    def render(self, markdown: str) -> str:
        """Qt rich-text HTML for ``markdown``; an unterminated fence renders as code."""
        return "".join(self.render_parts(markdown))

    def render_parts(self, markdown: str) -> list[str]:
        """``render`` cut at top-level code fences: each fence, and the prose between, alone.

        A widget that shows each part in its own label relays out only the part that
        changed while an answer streams, not the whole answer.
        """
        self._used = {}
        self.code = []
        # Any: markdown-it's env, which its plugins fill as they like
        env: dict[str, Any] = {}
        groups: list[list[MdToken]] = [[]]
        for token in self._md.parse(markdown, env):
            if token.type == "fence" and token.level == 0:
                groups.extend([[token], []])
            else:
                groups[-1].append(token)
        parts = [str(self._html.render(group, self._md.options, env)) for group in groups if group]
        self._cache = self._used
        return parts

    # ------------------------------------------------------------------ code
    def _lexer(self, language: str) -> Lexer:
        # No guessing for a fence without a language: pygments' guess_lexer takes ~340 ms
        # on first use and calls Python "Tera Term macro"; plain text is honest and fast.
        if language not in self._lexers:
            try:
                lexer: Lexer = get_lexer_by_name(language) if language else TextLexer()
            except ClassNotFound:
                lexer = TextLexer()
            self._lexers[language] = lexer
        return self._lexers[language]

    def highlight(self, code: str, language: str) -> str:
        """Code coloured with inline styles (Qt has no CSS classes), cached by content."""
        key = (language, code)
        html = self._cache.get(key) or self._used.get(key)
        if html is None:
            html = highlight(code, self._lexer(language), self._formatter)
        self._used[key] = html
        return html

    def _box(self, code: str, language: str, number: int | None) -> str:
        # One table, no border: a bordered or nested Qt table costs about half as much
        # again to lay out, on every refresh of a streaming answer.
        header = ""
        if number is not None:
            # A header strip: the language on the left, a copy link for this block on the right.
            name = escape(language or "text")
            header = (
                f'<tr><td bgcolor="{self.palette.border}"><span style="color:'
                f'{self.palette.muted};">{name}</span></td><td bgcolor="'
                f'{self.palette.border}" align="right"><a href="{COPY_SCHEME}{number}" '
                f'style="color:{self.palette.link};">{escape(self._copy_label)}</a>'
                f"</td></tr>"
            )
        body = self.highlight(code.rstrip("\n"), language).rstrip("\n")
        return (
            f'<table width="100%" cellspacing="0" cellpadding="6" bgcolor="'
            f'{self._background}" style="margin-top: 4px; margin-bottom: 4px;">{header}'
            f'<tr><td colspan="2"><pre style="color:{self._foreground}; white-space:'
            f' pre-wrap;">{body}</pre></td></tr></table>\n'
        )

    def _fence(
        self, tokens: Sequence[MdToken], idx: int, _options: OptionsDict, _env: EnvType
    ) -> str:
        token = tokens[idx]
        language = token.info.strip().split(maxsplit=1)[0].lower() if token.info.strip() else ""
        self.code.append(token.content.rstrip("\n"))
        return self._box(token.content, language, len(self.code) - 1)

    def _code_block(
        self, tokens: Sequence[MdToken], idx: int, _options: OptionsDict, _env: EnvType
    ) -> str:
        return self._box(tokens[idx].content, "", None)  # indented code: no copy link

    def _code_inline(
        self, tokens: Sequence[MdToken], idx: int, _options: OptionsDict, _env: EnvType
    ) -> str:
        return (
            f'<code style="background-color:{self.palette.inline_background};">'
            f"{escape(tokens[idx].content)}</code>"
        )

    # ------------------------------------------------------------------ inline
    def _image(
        self, tokens: Sequence[MdToken], idx: int, _options: OptionsDict, _env: EnvType
    ) -> str:
        # Never an <img>: a remote image would be a request to the network.
        token = tokens[idx]
        alt = "".join(child.content for child in token.children or [])
        return escape(f"[{alt or 'image'}]")

    def _link_open(
        self, tokens: Sequence[MdToken], idx: int, options: OptionsDict, env: EnvType
    ) -> str:
        # Qt would colour links with the palette's blue, unreadable on the dark theme.
        tokens[idx].attrSet("style", f"color:{self.palette.link};")
        return self._html.renderToken(tokens, idx, options, env)

    def _table_open(
        self, _tokens: Sequence[MdToken], _idx: int, _options: OptionsDict, _env: EnvType
    ) -> str:
        return (
            f'<table border="1" cellspacing="0" cellpadding="4" style="border-color:'
            f'{self.palette.rule}; border-style: solid;">\n'
        )
