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

import threading

from desktop.base.errors import Cancelled
from desktop.engine import PIECE_CHARS as OVERLONG_PIECE_CHARS
from desktop.engine import ChatCall, Engine, iter_pieces, refuse_overlong

# Characters a piece holds at least (~16k tokens of prose; 0.04-0.1 s of Gemma 3 270M's
# tokenizer on a busy 2-core machine), and the longest prompt counted in one call.
PIECE_CHARS = 65_536

# The over-context check before a slot counts pieces of this size (``refuse_over_context``).
CHECK_PIECE_CHARS = OVERLONG_PIECE_CHARS


def prompt_pieces(prompt: str, size: int = PIECE_CHARS) -> list[str]:
    """``prompt`` cut into pieces of ``size`` to ``2 * size`` characters (the last one
    may be shorter; ``iter_pieces``); one piece when it is ``size`` or fewer."""
    return list(iter_pieces(prompt, size))


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
    checked. The count is the engine's own (``refuse_overlong``), as the
    template tokenizes text (special tokens read as such). ``cancel`` set stops it
    between pieces (Cancelled). Blocks; an engine's tokenizer calls only, no slot.
    """
    n_ctx = engine.report.context_length
    if n_ctx <= 0:
        return
    refuse_overlong(
        text,
        max(n_ctx, context or 0),
        lambda piece: len(engine.tokenize(piece, add_bos=False, special=True)),
        cancel,
    )
