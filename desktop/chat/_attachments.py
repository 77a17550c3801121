"""Pictures and files attached to a question, and what the model is given of them.

A picture goes to the engine as pixels (``Message.images``; only a model with a vision
projector may take it). A document (text, Markdown, PDF, DOCX: the documents index's
own extractors) goes into the prompt as a quoted block under its name when it is short
for the model's context; a long one is cut into the index's chunks and its passages that
matter for each question become numbered sources, cited ``[n]`` like a collection's.

Reading and extracting block (a PDF may take a second): a window calls ``from_path`` on
a worker or accepts the wait for one file; everything else here is quick and pure.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from desktop.base.errors import InvalidRequest
from desktop.engine import DEFAULT_LIMITS, Image, ImageLimits, inspect_image, sniff
from desktop.retrieval import (
    DEFAULT_MAX_TOKENS,
    SUPPORTED_SUFFIXES,
    Block,
    Hit,
    SkipFile,
    chunk_blocks,
    coverage,
    load,
    paragraphs,
    search_terms,
)
from desktop.store import Attachment

__all__ = [
    "Attachment",
    "attached_sources",
    "check_image",
    "from_bytes",
    "from_path",
    "image_of",
    "inline_chars",
    "is_long",
    "prompt_text",
]

# Pictures are judged by ``engine._images`` (type, damage, byte and pixel caps), the one
# checker the APIs and the CLI use too, under the caps in force (``AppContext.image_limits``:
# settings and the ImageMaxMB / ImageMaxMegapixels policy); the engine checks again.
MAX_FILE_BYTES = 20 * 1024 * 1024  # a document attached to one message (kept in the chat)
DEFAULT_CONTEXT = 4096  # tokens, when the model's context is not known
CHARS_PER_TOKEN = 3  # a cautious average (English ~4, Chinese ~1.5 per token)
SOURCES_K = 5  # passages of long attachments given for one question
_PDF = "application/pdf"

MIMES = {
    ".txt": "text/plain",
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".pdf": _PDF,
    ".html": "text/html",
    ".htm": "text/html",
    ".csv": "text/csv",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
}


def check_image(
    data: bytes, limits: ImageLimits = DEFAULT_LIMITS, name: str = "the picture"
) -> str:
    """The picture's MIME type, or ImageRejected saying why it is refused (not a picture,
    damaged, more bytes or pixels than ``limits``): ``engine._images`` reads the header."""
    return inspect_image(data, limits, name=name).mime


def is_image(data: bytes) -> bool:
    """Whether ``data`` starts like a picture (whatever its file name says)."""
    return sniff(data) is not None


def from_bytes(name: str, data: bytes, limits: ImageLimits = DEFAULT_LIMITS) -> Attachment:
    """A picture given as bytes (pasted from the clipboard); InvalidRequest if refused."""
    mime = check_image(data, limits)
    return Attachment("image", name, mime, data, hashlib.sha256(data).hexdigest())


def from_path(path: Path, limits: ImageLimits = DEFAULT_LIMITS) -> Attachment:
    """The picture or document at ``path`` as an attachment (blocks: reads, extracts).

    InvalidRequest says why a file cannot be attached (type, size, no text, unreadable;
    a picture over ``limits``).
    """
    try:
        size = path.stat().st_size
        if size > max(limits.max_bytes, MAX_FILE_BYTES):
            raise InvalidRequest(f"{path.name} is too large to attach ({size / 2**20:.1f} MB)")
        with path.open("rb") as handle:
            head = handle.read(64 * 1024)
        if is_image(head):
            data = path.read_bytes()
            mime = check_image(data, limits)
            return Attachment("image", path.name, mime, data, hashlib.sha256(data).hexdigest())
        if path.suffix.lower() not in SUPPORTED_SUFFIXES:
            raise InvalidRequest(
                f"{path.name}: EdgeDesk attaches pictures and text, "
                "Markdown, PDF or Word (.docx) files"
            )
        blocks = load(path, max_bytes=MAX_FILE_BYTES)
        data = path.read_bytes()
    except SkipFile as exc:
        raise InvalidRequest(f"{path.name} cannot be attached: {exc.reason}") from None
    except OSError as exc:
        raise InvalidRequest(f"{path.name} cannot be read ({exc.strerror or exc})") from None
    mime = MIMES.get(path.suffix.lower(), "text/plain")
    return Attachment(
        "file",
        path.name,
        mime,
        data,
        hashlib.sha256(data).hexdigest(),
        _text_of(blocks, paged=mime == _PDF),
    )


def _text_of(blocks: Sequence[Block], *, paged: bool) -> str:
    """The blocks' text laid out on their own line numbers (pages split by a form feed),
    so ``_blocks`` finds the same pages and lines again for citations."""
    pages: dict[int, list[str]] = {}
    for block in blocks:
        lines = pages.setdefault(block.page or 1, [])
        if len(lines) >= block.line_start and lines:  # a piece of a long line cut in two
            lines[-1] += " " + block.text.replace("\n", " ")
            continue
        lines += [""] * (block.line_start - 1 - len(lines))
        lines += block.text.split("\n")
    if not paged:
        return "\n".join(pages.get(1, []))
    last = max(pages, default=1)
    return "\f".join("\n".join(pages.get(n, [])) for n in range(1, last + 1))


def _blocks(item: Attachment) -> list[Block]:
    if item.mime != _PDF:
        return paragraphs(item.text)
    return [
        b
        for number, page in enumerate(item.text.split("\f"), start=1)
        for b in paragraphs(page, number)
    ]


def image_of(item: Attachment) -> Image:
    """A picture attachment as the engine takes it."""
    return Image(item.data, item.mime, item.sha256)


def inline_chars(context_tokens: int | None) -> int:
    """How long a document may be to go into the prompt whole: a quarter of the model's
    context (the rest is for the chat, other files and the answer)."""
    return (context_tokens or DEFAULT_CONTEXT) // 4 * CHARS_PER_TOKEN


def is_long(item: Attachment, limit: int) -> bool:
    """Whether a document is too long for the prompt (its passages are then cited)."""
    return item.kind == "file" and len(item.text) > limit


def _fence(text: str) -> str:
    longest = max((len(run) for run in text.split("\n") if set(run) == {"`"}), default=0)
    return "`" * max(3, longest + 1)


def prompt_text(text: str, items: Sequence[Attachment], limit: int) -> str:
    """A question as the model reads it: each short document quoted under its name, a
    long one announced (its passages come as numbered sources), then the question."""
    parts: list[str] = []
    for item in items:
        if item.kind != "file":
            continue
        if is_long(item, limit):
            parts.append(
                f"[Attached file {item.name}: long; the passages that matter are "
                "given as numbered sources]"
            )
        else:
            quoted = item.text.strip().replace("\f", "\n\n")  # a PDF's pages in turn
            fence = _fence(quoted)
            parts.append(f"Attached file {item.name}:\n{fence}\n{quoted}\n{fence}")
    return "\n\n".join([*parts, text]) if parts else text


def attached_sources(
    question: str,
    items: Sequence[Attachment],
    limit: int,
    k: int = SOURCES_K,
    count: Callable[[Sequence[str]], list[int]] | None = None,
) -> list[Hit]:
    """The passages of the long documents in ``items`` that best match ``question``.

    Cut by the documents index's own chunker; ranked by the share of the question's
    words each holds (document order among equals), so the same question over the same
    files always gives the same numbered sources. No embedding model is needed: a file
    attached to one message is not indexed, and a chat works without one.
    """
    count = count or (lambda texts: [max(1, len(t) // CHARS_PER_TOKEN) for t in texts])
    # The k passages together take about what one inlined document may (400 tokens
    # each at most, the documents index's own chunk size).
    size = max(32, min(DEFAULT_MAX_TOKENS, limit // CHARS_PER_TOKEN // k))
    chunks: list[Hit] = []
    for item in items:
        if not is_long(item, limit):
            continue
        for piece in chunk_blocks(_blocks(item), count, max_tokens=size, overlap_tokens=size // 8):
            chunks.append(
                Hit(
                    len(chunks),
                    "",
                    item.name,
                    piece.page,
                    piece.line_start,
                    piece.line_end,
                    piece.text,
                    0.0,
                )
            )
    if not chunks:
        return []
    share = coverage(search_terms(question))
    scored = [replace(h, score=share(h.text)) for h in chunks]
    matching = sorted((h for h in scored if h.score > 0), key=lambda h: (-h.score, h.chunk_id))
    # No passage holds a word of the question ("summarise this"): the documents' start.
    return matching[:k] or scored[:k]
