"""Turn a file into paragraphs of text that remember where they came from (page, lines).

Supported: plain text and Markdown, HTML, PDF (pypdf), DOCX (python-docx) and source
code. A file we cannot or should not read raises ``SkipFile`` with a reason a person
understands; the indexer lists it and carries on.
"""

from __future__ import annotations

import io
import logging
import os
import warnings
import zipfile
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from desktop.retrieval._handles import Refused, open_no_links, read_all

TEXT_SUFFIXES = frozenset({".txt", ".md", ".markdown", ".rst", ".text", ".log", ".csv", ".tsv"})
CODE_SUFFIXES = frozenset(
    {
        ".py",
        ".pyi",
        ".js",
        ".mjs",
        ".ts",
        ".tsx",
        ".jsx",
        ".java",
        ".kt",
        ".scala",
        ".c",
        ".h",
        ".cc",
        ".cpp",
        ".hpp",
        ".cs",
        ".go",
        ".rs",
        ".rb",
        ".php",
        ".swift",
        ".m",
        ".lua",
        ".r",
        ".sh",
        ".bash",
        ".ps1",
        ".sql",
        ".toml",
        ".yaml",
        ".yml",
        ".json",
        ".ini",
        ".cfg",
        ".css",
        ".scss",
        ".vue",
        ".svelte",
        ".dart",
        ".jl",
        ".hs",
        ".ex",
        ".exs",
        ".clj",
        ".el",
        ".vim",
    }
)
HTML_SUFFIXES = frozenset({".html", ".htm", ".xhtml"})
SUPPORTED_SUFFIXES = TEXT_SUFFIXES | CODE_SUFFIXES | HTML_SUFFIXES | {".pdf", ".docx"}
DEFAULT_MAX_BYTES = 50 * 1024 * 1024
# A DOCX is a zip: its parts are read whole into memory, so what counts is their
# unpacked size (a 3 MB file can hold a 3 GiB image of zeros).
UNPACKED_FACTOR = 4
# Longer lines are cut at spaces before chunking: a 45 MB one-line text must become many
# small pieces, not one string the tokenizer and the chunker hold (and copy) whole.
MAX_LINE_CHARS = 2000


class SkipFile(Exception):
    """This file is left out of the index, for ``reason``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Block:
    """A paragraph (or code block) and where it is: page (PDF only) and 1-based lines."""

    text: str
    page: int | None
    line_start: int
    line_end: int


def paragraphs(text: str, page: int | None = None) -> list[Block]:
    """Split text at blank lines, keeping each paragraph's line range."""
    blocks: list[Block] = []
    current: list[str] = []
    start = 0
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        if len(line) > MAX_LINE_CHARS:
            if current:
                blocks.append(Block("\n".join(current), page, start, number - 1))
                current = []
            blocks += [Block(piece, page, number, number) for piece in split_line(line)]
        elif line.strip():
            if not current:
                start = number
            current.append(line.rstrip())
        elif current:
            blocks.append(Block("\n".join(current), page, start, number - 1))
            current = []
    if current:
        blocks.append(Block("\n".join(current), page, start, len(lines)))
    return blocks


def split_line(line: str, size: int = MAX_LINE_CHARS) -> list[str]:
    """``line`` in pieces of at most ``size`` characters, cut at a space where one is near."""
    pieces: list[str] = []
    at = 0
    while at < len(line):
        end = min(at + size, len(line))
        if end < len(line):
            space = line.rfind(" ", at + size // 2, end)
            end = space + 1 if space > 0 else end
        piece = line[at:end].strip()
        if piece:
            pieces.append(piece)
        at = end
    return pieces


def _size(size: int, limit: int) -> tuple[str, str]:
    """Two sizes that read as different numbers (not "52 MB; the limit is 52 MB")."""
    for unit, scale in (("MB", 1e6), ("KB", 1e3)):
        shown = (f"{size / scale:.1f} {unit}", f"{limit / scale:.1f} {unit}")
        if shown[0] != shown[1]:
            return shown
    return f"{size} bytes", f"{limit} bytes"


def check_type(path: Path) -> None:
    """Raise SkipFile for a file of a type never indexed, by its name alone."""
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise SkipFile(f"unsupported file type '{suffix or path.name}'")


def check(path: Path, size: int, *, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
    """Raise SkipFile for a file not worth reading (type, size), without opening it."""
    check_type(path)
    if size > max_bytes:
        got, limit = _size(size, max_bytes)
        raise SkipFile(f"too large ({got}; the limit is {limit})")
    if size == 0:
        raise SkipFile("empty file")


def load(path: Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> list[Block]:
    """The text of ``path`` as blocks; raises SkipFile if it cannot or should not be read.

    The file is opened without following it (``_handles.open_no_links``): a stored path
    is resolved when indexed, so a link there now is a swap, refused.
    """
    check_type(path)
    try:
        opened = open_no_links(path)
    except Refused as exc:
        raise SkipFile(exc.reason) from None
    except OSError as exc:
        raise SkipFile(f"cannot read ({exc.strerror})") from None
    try:
        check(path, opened.stat.st_size, max_bytes=max_bytes)
        data = read_fd(opened.fd, max_bytes)
    finally:
        os.close(opened.fd)
    return load_data(path, data, max_bytes=max_bytes)


def read_fd(fd: int, max_bytes: int) -> bytes:
    """The bytes of an opened file; SkipFile past ``max_bytes`` (it grew) or unreadable."""
    try:
        data = read_all(fd, max_bytes)
    except OSError as exc:
        raise SkipFile(f"cannot read ({exc.strerror})") from None
    if len(data) > max_bytes:
        got, limit = _size(len(data), max_bytes)
        raise SkipFile(f"too large ({got}+; the limit is {limit})")
    return data


def load_data(path: Path, data: bytes, *, max_bytes: int = DEFAULT_MAX_BYTES) -> list[Block]:
    """The text of a file's bytes ``data`` (read by handle) as blocks; ``path`` names its
    type. SkipFile if it cannot or should not be read."""
    suffix = path.suffix.lower()
    check(path, len(data), max_bytes=max_bytes)
    if suffix == ".pdf":
        blocks = _load_pdf(io.BytesIO(data))
    elif suffix == ".docx":
        blocks = _load_docx(io.BytesIO(data), max_unpacked=max_bytes * UNPACKED_FACTOR)
    elif suffix in HTML_SUFFIXES:
        blocks = _load_html(_decode_text(data))
    else:
        blocks = paragraphs(_decode_text(data))
    if not blocks:
        raise SkipFile("no text found" + (" (a scanned PDF?)" if suffix == ".pdf" else ""))
    return blocks


def numbered_lines(
    path: Path, page: int | None = None, *, max_bytes: int = DEFAULT_MAX_BYTES
) -> list[str]:
    """The text of ``path`` (of one ``page`` of a PDF) as the lines its citations count,
    ``result[n - 1]`` being line ``n``: what a viewer shows with a cited passage marked.

    The file is read as indexing reads it, so "lines 3-9" are the same lines here; lines
    that held no text (blank ones) are empty. SkipFile when the file cannot be read.
    """
    lines: dict[int, str] = {}
    for block in load(path, max_bytes=max_bytes):
        if page is not None and block.page != page:
            continue
        texts = block.text.split("\n")
        if len(texts) == block.line_end - block.line_start + 1:
            for offset, text in enumerate(texts):
                lines[block.line_start + offset] = text
        else:  # a long line split in pieces, a DOCX paragraph: all on its first line
            joined = lines.get(block.line_start, "")
            lines[block.line_start] = (joined + " " if joined else "") + " ".join(texts)
    return [lines.get(n, "") for n in range(1, max(lines, default=0) + 1)]


def _decode_text(data: bytes) -> str:
    if b"\x00" in data[:8192] and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise SkipFile("binary file, not text")
    for encoding in ("utf-8-sig", "utf-16"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise SkipFile("not UTF-8 text")


def _load_pdf(path: io.BytesIO) -> list[Block]:
    import pypdf
    from pypdf.errors import PdfReadError

    # pypdf reports recoverable damage through logging and warnings; a broken file is
    # judged by whether text comes out, not by its complaints.
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    blocks: list[Block] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            reader = pypdf.PdfReader(path)
            if reader.is_encrypted and not reader.decrypt(""):
                raise SkipFile("encrypted PDF (needs a password)")
            for number, page in enumerate(reader.pages, start=1):
                blocks += paragraphs(page.extract_text() or "", number)
        except SkipFile:
            raise
        except (PdfReadError, ValueError, KeyError, TypeError, OSError) as exc:
            raise SkipFile(f"not a readable PDF ({exc})") from None
        except Exception as exc:  # pypdf raises many types on damaged input
            if "crypt" in str(exc).lower():
                raise SkipFile("encrypted PDF (unsupported encryption)") from None
            raise SkipFile(f"not a readable PDF ({type(exc).__name__})") from None
    return blocks


def _check_unpacked(path: io.BytesIO, limit: int) -> None:
    """SkipFile when the zip's parts would unpack to more than ``limit`` bytes.

    The sizes come from the zip's directory; a part that claims less than it holds is
    cut off at its claimed size by ``zipfile`` (and fails its checksum), so the claim
    bounds the memory.
    """
    try:
        with zipfile.ZipFile(path) as archive:
            unpacked = sum(member.file_size for member in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        raise SkipFile("not a readable DOCX (not a zip file)") from None
    if unpacked > limit:
        got, most = _size(unpacked, limit)
        raise SkipFile(f"too large when unpacked ({got}; the limit is {most})")


def _load_docx(
    path: io.BytesIO, *, max_unpacked: int = DEFAULT_MAX_BYTES * UNPACKED_FACTOR
) -> list[Block]:
    import docx

    _check_unpacked(path, max_unpacked)
    try:
        path.seek(0)
        document = docx.Document(path)
    except Exception as exc:  # python-docx wraps zip and XML errors inconsistently
        raise SkipFile(f"not a readable DOCX ({type(exc).__name__})") from None
    # "Lines" of a DOCX are its paragraph numbers: what a reader can count in Word.
    blocks = [
        Block(p.text.strip(), None, n, n)
        for n, p in enumerate(document.paragraphs, start=1)
        if p.text.strip()
    ]
    row_number = len(document.paragraphs)
    for table in document.tables:
        for row in table.rows:
            row_number += 1
            cells = " | ".join(c.text.strip() for c in row.cells if c.text.strip())
            if cells:
                blocks.append(Block(cells, None, row_number, row_number))
    return blocks


_BLOCK_TAGS = frozenset(
    {
        "p",
        "div",
        "br",
        "li",
        "ul",
        "ol",
        "tr",
        "table",
        "section",
        "article",
        "header",
        "footer",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "pre",
        "blockquote",
        "title",
        "dd",
        "dt",
    }
)


class _HtmlText(HTMLParser):
    """Visible text in block-level pieces, each with its line range in the source."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[Block] = []
        self._parts: list[str] = []
        self._start = self._end = 0
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in {"script", "style", "noscript", "template"}:
            self._hidden += 1
        elif tag in _BLOCK_TAGS:
            self.flush()

    def handle_endtag(self, tag: str) -> None:
        if tag in {"script", "style", "noscript", "template"}:
            self._hidden = max(0, self._hidden - 1)
        elif tag in _BLOCK_TAGS:
            self.flush()

    def handle_data(self, data: str) -> None:
        if self._hidden or not data.strip():
            return
        line = self.getpos()[0]
        if not self._parts:
            self._start = line
        self._parts.append(" ".join(data.split()))
        self._end = line + data.count("\n")

    def flush(self) -> None:
        if self._parts:
            self.blocks.append(Block(" ".join(self._parts), None, self._start, self._end))
            self._parts = []


def _load_html(text: str) -> list[Block]:
    parser = _HtmlText()
    parser.feed(text)
    parser.close()
    parser.flush()
    return parser.blocks
