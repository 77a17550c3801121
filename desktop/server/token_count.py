"""Counting a rendered prompt's tokens in pieces, so a client that leaves stops the count.

One tokenize call cannot be interrupted, and a prompt near count_tokens' limit (1 MiB
of text) holds a core for seconds in one. A prompt longer than ``PIECE_CHARS`` is cut
into pieces of ``PIECE_CHARS`` to twice that, each cut where tokenizers do not join
text: before a line that starts with a non-blank character, else before a space
between two words, else after a CJK clause mark (``，。`` …), else (64 KiB of minified
data or one repeated letter) at the size itself. The pieces' counts are summed and
``cancel`` is checked before each.

A prompt of ``PIECE_CHARS`` or less is one call, the exact count. A longer one can
differ from a single call by a token at a cut where the model's vocabulary holds a
token spanning it (or a tokenizer that adds a space in front of every text does so for
each piece): at most a token a cut, 15 for a 1 MiB prompt (docs/api.md).
"""

from __future__ import annotations

import re
import threading

from desktop.base.errors import Cancelled, ContextOverflow
from desktop.engine.protocol import Engine
from desktop.engine.types import ChatCall

# Characters a piece holds at least (~16k tokens of prose; 0.04-0.1 s of Gemma 3 270M's
# tokenizer on a busy 2-core machine), and the longest prompt counted in one call.
PIECE_CHARS = 65_536

# A prompt text is checked against the context before it takes a slot only when it is
# longer than this many characters per context token (and than two pieces): prompts that
# long are far over it; shorter ones cost the engine little to count whole.
OVERLONG_CHARS_PER_TOKEN = 8
CHECK_PIECE_CHARS = 16_384
# Tokens a cut may add to the pieces' sum over the whole text's: a space a tokenizer puts
# before each text, a word or a special token's text split at the cut.
CUT_SLACK = 32

_LINE = re.compile(r"\n(?=\S)")  # cut after the line break
_WORD = re.compile(r"(?<=\S) (?=\S)")  # cut before the space
_CLAUSE = re.compile(r"[。！？；，、](?=\S)")  # cut after the mark: CJK text has no spaces


def prompt_pieces(prompt: str, size: int = PIECE_CHARS) -> list[str]:
    """``prompt`` cut into pieces of ``size`` to ``2 * size`` characters (the last one
    may be shorter); one piece when it is ``size`` characters or fewer."""
    pieces: list[str] = []
    start = 0
    while len(prompt) - start > size:
        at, end = start + size, min(start + 2 * size, len(prompt))
        line = _LINE.search(prompt, at, end)
        if line is not None:
            cut = line.end()
        else:
            word = _WORD.search(prompt, at, end)
            if word is not None:
                cut = word.start()
            else:
                clause = _CLAUSE.search(prompt, at, end)
                cut = clause.end() if clause is not None else at
        pieces.append(prompt[start:cut])
        start = cut
    pieces.append(prompt[start:])
    return pieces


def count_prompt_tokens(engine: Engine, prompt: str, cancel: threading.Event | None = None) -> int:
    """The tokens ``engine`` reads for the rendered ``prompt`` (BOS as ``prompt_tokens``
    adds it), counted piece by piece; ``cancel`` set stops it between pieces (Cancelled)."""
    total = 0
    for n, piece in enumerate(prompt_pieces(prompt)):
        if cancel is not None and cancel.is_set():
            raise Cancelled("the client left; its tokens were not counted")
        tokens = (
            engine.prompt_tokens(piece)
            if n == 0
            else engine.tokenize(piece, add_bos=False, special=True)
        )
        total += len(tokens)
    return total


def user_texts(chat: ChatCall) -> list[str]:
    """The user turns' texts, each of which a chat prompt holds whole (a template may trim
    a turn's ends, so they are trimmed too)."""
    return [m.content.strip() for m in chat.messages if m.role == "user"]


def refuse_over_context(
    engine: Engine,
    text: str,
    context: int | None = None,
    cancel: threading.Event | None = None,
) -> None:
    """Raise ContextOverflow when ``text``, which the prompt holds whole (a user turn, a
    completion prompt), surely has more tokens than the context, having tokenized about a
    context's worth of it; else return, leaving the exact count to the engine.

    The context is the loaded one, or the request's ``context`` when larger (a reload
    would give it that); an engine that does not say its context (a remote) is not
    checked. Pieces (``prompt_pieces``) are counted in order as the template tokenizes
    text (special tokens read as such), until their tokens less ``CUT_SLACK`` per cut
    reach the context: the prompt holds at least that many. ``cancel`` set stops it
    between pieces (Cancelled). Blocks; an engine's tokenizer calls only, no slot.
    """
    n_ctx = engine.report.context_length
    if n_ctx <= 0:
        return
    n_ctx = max(n_ctx, context or 0)
    if len(text) <= max(OVERLONG_CHARS_PER_TOKEN * n_ctx, 2 * CHECK_PIECE_CHARS):
        return
    total = 0
    for cuts, piece in enumerate(prompt_pieces(text, CHECK_PIECE_CHARS)):
        if cancel is not None and cancel.is_set():
            raise Cancelled("the client left; its prompt was not counted")
        total += len(engine.tokenize(piece, add_bos=False, special=True))
        at_least = total - CUT_SLACK * cuts
        if at_least >= n_ctx:
            raise ContextOverflow(
                f"the prompt is more than {at_least} tokens (counting stopped there) but "
                f"the model's context is {n_ctx}; shorten the conversation or load the "
                "model with a larger context",
                prompt_tokens=at_least,
                n_ctx=n_ctx,
                params={"prompt_tokens": at_least, "context": n_ctx},
            )
