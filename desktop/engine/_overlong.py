"""Refusing a prompt far over the context after about a context's worth of tokenizing.

A 7.9 MB prompt tokenized whole held a core for 12 s and took a worker to 1.1 GB before
"over the context" came back (issue 48). A text longer than ``CHARS_PER_TOKEN``
characters per context token is instead cut into pieces (``iter_pieces``) and counted
in order; once the pieces' tokens, less ``CUT_SLACK`` per cut, reach the context, the
whole text surely has at least that many and is refused. Pure: the caller passes how a
piece is counted (the engine's own tokenizer, or a worker's over its pipe), so the
engine and the server's check before a slot run the very same count.

Cuts fall where tokenizers do not join text: before a line that starts with a
non-blank character, else before a space between two words, else after a CJK clause
mark (``，。`` …), else (minified data, one repeated letter) at the size itself.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator

from desktop.base.errors import Cancelled, ContextOverflow, prompt_size_params

# Only a text longer than this many characters per context token (and than two pieces)
# is counted in pieces first: that long, it is far over the context; a shorter one costs
# little to count whole.
CHARS_PER_TOKEN = 8
PIECE_CHARS = 16_384  # characters a counted piece holds at least (up to twice that)
# Tokens a cut may add to the pieces' sum over the whole text's: a space a tokenizer puts
# before each text, a word or a special token's text split at the cut.
CUT_SLACK = 32

_LINE = re.compile(r"\n(?=\S)")  # cut after the line break
_WORD = re.compile(r"(?<=\S) (?=\S)")  # cut before the space
_CLAUSE = re.compile(r"[。！？；，、](?=\S)")  # cut after the mark: CJK text has no spaces


def iter_pieces(text: str, size: int = PIECE_CHARS) -> Iterator[str]:
    """``text`` cut into pieces of ``size`` to ``2 * size`` characters (the last one may
    be shorter), lazily: a caller that stops early cuts no more."""
    start = 0
    while len(text) - start > size:
        at, end = start + size, min(start + 2 * size, len(text))
        line = _LINE.search(text, at, end)
        if line is not None:
            cut = line.end()
        else:
            word = _WORD.search(text, at, end)
            if word is not None:
                cut = word.start()
            else:
                clause = _CLAUSE.search(text, at, end)
                cut = clause.end() if clause is not None else at
        yield text[start:cut]
        start = cut
    yield text[start:]


def refuse_overlong(
    text: str,
    n_ctx: int,
    count: Callable[[str], int],
    cancel: threading.Event | None = None,
) -> None:
    """Raise ContextOverflow when ``text`` surely holds more than ``n_ctx`` tokens, having
    counted (``count``: one piece's tokens) about a context's worth of it; else return,
    leaving the exact count to the caller. ``cancel`` set stops it between pieces
    (Cancelled). Blocks for as long as ``count`` does."""
    if n_ctx <= 0 or len(text) <= max(CHARS_PER_TOKEN * n_ctx, 2 * PIECE_CHARS):
        return
    total = counted = 0
    for cuts, piece in enumerate(iter_pieces(text)):
        if cancel is not None and cancel.is_set():
            raise Cancelled("the client left; its prompt was not counted")
        total += count(piece)
        counted += len(piece)
        at_least = total - CUT_SLACK * cuts
        if at_least >= n_ctx:
            # The rest at the counted part's rate: "more than 2,579" alone understated a
            # pasted book by 40x, and people shorten by what they are told.
            about = max(at_least, int(round(at_least * len(text) / counted, -2)))
            raise ContextOverflow(
                f"the prompt is about {about:,} tokens (counting stopped after "
                f"{at_least:,}, {counted * 100 // len(text)}% of it) but the model's "
                f"context is {n_ctx:,}; shorten the conversation or load the model with a "
                "larger context",
                prompt_tokens=at_least,
                n_ctx=n_ctx,
                kind="prompt_far_too_long",
                params=prompt_size_params(at_least, n_ctx, shown=about),
            )
