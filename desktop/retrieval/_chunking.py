"""Pack paragraphs into passages measured in the embedding model's own tokens.

A passage (``Passage``; stored as a row of the ``chunks`` table) never splits a paragraph
unless the paragraph alone is too long (then it splits at lines, then at spaces), never
spans two PDF pages (so a citation names one page), and begins with the last
paragraph(s) of the previous passage as overlap, so an answer that straddles a boundary
is still found whole in one passage.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from desktop.retrieval._loaders import MAX_LINE_CHARS, Block, split_line

# Counts tokens for many texts in one call (one trip through the scheduler).
TokenCounter = Callable[[Sequence[str]], list[int]]
DEFAULT_MAX_TOKENS = 400  # BGE models read 512 tokens; leave room for special tokens
DEFAULT_OVERLAP_TOKENS = 50


@dataclass(frozen=True)
class Passage:
    """A piece of a document to embed, with its place and a content hash."""

    text: str
    page: int | None
    line_start: int
    line_end: int
    tokens: int

    @property
    def hash(self) -> str:
        """SHA-256 of the text: equal text means an equal embedding, so it is reused."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class _Unit:
    block: Block
    tokens: int


def _split_long_line(block: Block, tokens: int, max_tokens: int) -> list[_Unit]:
    """Cut one over-long line at spaces (or anywhere, for Chinese) into pieces that fit."""
    pieces = math.ceil(tokens / max_tokens * 1.15)
    size = max(1, math.ceil(len(block.text) / pieces))
    units: list[_Unit] = []
    text = block.text
    while text:
        cut = size if len(text) > size else len(text)
        space = text.rfind(" ", size // 2, cut) if cut < len(text) else -1
        cut = space if space > 0 else cut
        piece, text = text[:cut].strip(), text[cut:].lstrip()
        if piece:
            share = max(1, round(tokens * len(piece) / len(block.text)))
            units.append(_Unit(Block(piece, block.page, block.line_start, block.line_end), share))
    return units


def _bounded(blocks: Sequence[Block]) -> list[Block]:
    """The blocks with any over-long one cut into lines and pieces of bounded length.

    Token counting and splitting a huge block (a web page that is one text node) would
    otherwise hold and copy all of it at once; small pieces keep memory flat.
    """
    out: list[Block] = []
    for block in blocks:
        if len(block.text) <= MAX_LINE_CHARS:
            out.append(block)
            continue
        lines = block.text.split("\n")
        numbered = len(lines) == block.line_end - block.line_start + 1
        for i, line in enumerate(lines):
            where = block.line_start + i if numbered else block.line_start
            end = where if numbered else block.line_end
            out += [Block(piece, block.page, where, end) for piece in split_line(line)]
    return out


def _units(blocks: Sequence[Block], count: TokenCounter, max_tokens: int) -> list[_Unit]:
    blocks = _bounded(blocks)
    counts = count([b.text for b in blocks])
    units: list[_Unit] = []
    for block, tokens in zip(blocks, counts, strict=True):
        if tokens <= max_tokens:
            units.append(_Unit(block, tokens))
            continue
        lines = [
            Block(text, block.page, block.line_start + i, block.line_start + i)
            for i, text in enumerate(block.text.split("\n"))
            if text.strip()
        ]
        if len(lines) == 1:
            units += _split_long_line(lines[0], tokens, max_tokens)
            continue
        for line, line_tokens in zip(lines, count([x.text for x in lines]), strict=True):
            if line_tokens <= max_tokens:
                units.append(_Unit(line, line_tokens))
            else:
                units += _split_long_line(line, line_tokens, max_tokens)
    return units


def _join(units: Sequence[_Unit]) -> Passage:
    text = units[0].block.text
    for prev, unit in itertools.pairwise(units):
        adjacent = unit.block.line_start <= prev.block.line_end + 1
        text += ("\n" if adjacent else "\n\n") + unit.block.text
    return Passage(
        text,
        units[0].block.page,
        min(u.block.line_start for u in units),
        max(u.block.line_end for u in units),
        sum(u.tokens for u in units),
    )


def chunk_blocks(
    blocks: Sequence[Block],
    count_tokens: TokenCounter,
    *,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    overlap_tokens: int = DEFAULT_OVERLAP_TOKENS,
) -> list[Passage]:
    """Passages of at most ``max_tokens`` (by ``count_tokens``) with paragraph overlap."""
    if not blocks:
        return []
    chunks: list[Passage] = []
    current: list[_Unit] = []
    fresh = False  # whether ``current`` holds anything beyond the carried-over overlap
    for unit in _units(blocks, count_tokens, max_tokens):
        used = sum(u.tokens for u in current)
        new_page = bool(current) and unit.block.page != current[-1].block.page
        if current and (new_page or used + unit.tokens > max_tokens):
            if fresh:
                chunks.append(_join(current))
            current = [] if new_page else _overlap(current, overlap_tokens)
            if sum(u.tokens for u in current) + unit.tokens > max_tokens:
                current = []
        current.append(unit)
        fresh = True
    if current and fresh:
        chunks.append(_join(current))
    return chunks


def _overlap(units: Sequence[_Unit], budget: int) -> list[_Unit]:
    """The trailing whole units of a passage that fit in ``budget`` tokens."""
    kept: list[_Unit] = []
    total = 0
    for unit in reversed(units):
        if total + unit.tokens > budget:
            break
        kept.insert(0, unit)
        total += unit.tokens
    return kept
