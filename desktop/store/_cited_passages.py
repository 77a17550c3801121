"""The document passages an answer was grounded in, as the chat store keeps them.

``Source`` is also the citation type everywhere (``retrieval._citations.Citation`` is this
class), and ``location`` the one "file, page, lines" formatter.

A grounded answer is stored with the numbered sources the model was given and which of
them it cited, so a reopened chat shows the same ``[n]`` citations without searching
again (the collection may have changed or been deleted since). Each source keeps a
bounded snippet of its text: enough for a tooltip and an export, not a second copy of
the document.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from desktop.base.errors import InvalidRequest

SNIPPET_CHARS = 1000


@dataclass(frozen=True)
class Source:
    """One numbered passage given to the model: file, page, lines, a snippet, cited or not."""

    number: int
    path: str
    page: int | None
    line_start: int
    line_end: int
    text: str = ""
    cited: bool = False

    @property
    def location(self) -> str:
        """``/docs/notes.pdf p. 2, lines 3-9``."""
        return location(self.path, self.page, self.line_start, self.line_end)


def place(page: int | None, line_start: int, line_end: int, *, page_word: str = "p.") -> str:
    """``p. 2, lines 3-9`` (``line 3`` for one line; no page where a file has none)."""
    lines = f"line {line_start}" if line_start == line_end else f"lines {line_start}-{line_end}"
    return (f"{page_word} {page}, " if page else "") + lines


def location(path: str, page: int | None, line_start: int, line_end: int) -> str:
    """``/docs/notes.pdf p. 2, lines 3-9``: the one way a cited place is written."""
    return f"{path} {place(page, line_start, line_end)}"


class SourceJSON(TypedDict):
    """A source as the ``messages.sources`` column and the JSON export keep it."""

    n: int
    path: str
    page: int | None
    line_start: int
    line_end: int
    text: str
    cited: bool


def source_dicts(sources: Iterable[Source]) -> list[SourceJSON]:
    """Sources as plain JSON objects (the column's and the export's form), snippets bounded."""
    return [
        {
            "n": s.number,
            "path": s.path,
            "page": s.page,
            "line_start": s.line_start,
            "line_end": s.line_end,
            "text": s.text[:SNIPPET_CHARS],
            "cited": s.cited,
        }
        for s in sources
    ]


def encode_sources(sources: Sequence[Source]) -> str | None:
    """The ``messages.sources`` column value: JSON, or NULL for an ungrounded message."""
    return json.dumps(source_dicts(sources), ensure_ascii=False) if sources else None


def parse_sources(items: object) -> tuple[Source, ...]:
    """Sources from their JSON objects; InvalidRequest names what is malformed."""
    if items is None:
        return ()
    if not isinstance(items, list):
        raise InvalidRequest("sources must be a list of objects")
    out: list[Source] = []
    for item in items:
        try:
            page = item.get("page")
            out.append(
                Source(
                    int(item["n"]),
                    str(item["path"]),
                    None if page is None else int(page),
                    int(item["line_start"]),
                    int(item["line_end"]),
                    str(item.get("text", ""))[:SNIPPET_CHARS],
                    bool(item.get("cited", False)),
                )
            )
        except (AttributeError, KeyError, TypeError, ValueError):
            raise InvalidRequest(
                "a source needs n, path, line_start and line_end (page, text and cited "
                f"are optional): {str(item)[:80]}"
            ) from None
    return tuple(out)


def decode_sources(column: str | None) -> tuple[Source, ...]:
    """The sources stored in a ``messages.sources`` value (none for NULL or damage)."""
    if not column:
        return ()
    try:
        return parse_sources(json.loads(column))
    except (ValueError, InvalidRequest):  # a damaged value must not hide the conversation
        return ()


def sources_markdown(sources: Sequence[Source]) -> list[str]:
    """Markdown lines listing the sources under an answer (cited ones first said so)."""
    if not sources:
        return []
    cited = any(s.cited for s in sources)
    lines = ["**Sources:**" if cited else "**Sources given (none cited):**", ""]
    for s in sources:
        mark = " — cited" if s.cited else ""
        lines.append(f"- [{s.number}] {Path(s.path).name} ({s.location}){mark}")
    return [*lines, ""]
