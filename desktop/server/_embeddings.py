"""Embedding texts for the API (OpenAI's ``/v1/embeddings``, Ollama's ``/api/embed``
and ``/api/embeddings``), within the documented size limits (docs/api.md).

A request is bounded twice: its size is refused up front with a 400 naming the limit
(``check_inputs``, then each input's tokens), and its client leaving sets the cancel
event the engine checks between decodes.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence

from desktop.base.errors import InvalidRequest
from desktop.engine import Engine
from desktop.server._cache import embedding_ids_key, embedding_key
from desktop.server._services import Services

MAX_INPUTS = 2048  # inputs in one request (OpenAI's limit)
MAX_INPUT_TOKENS = 8192  # tokens in one input (OpenAI's limit; longer ones are windowed)
MAX_REQUEST_TOKENS = 300_000  # tokens in all of one request's inputs (OpenAI's limit)
# Checked before anything is tokenized: no tokenizer packs more than this many characters
# into a token of real text, so a longer input is over MAX_INPUT_TOKENS anyway.
MAX_INPUT_CHARS = MAX_INPUT_TOKENS * 16
# The most tokens any tokenizer makes of one UTF-8 byte of text, and of none (BOS, EOS or
# SEP, a leading space): a byte-level BPE token holds at least a byte; SentencePiece and
# WordPiece at least a character of the normalised text, and normalising makes at most
# 4 characters of a 3-byte one. An input whose bound is within the limits needs no
# tokenizing to be checked.
TOKENS_PER_BYTE = 2
TOKENS_ADDED = 8


def check_inputs(inputs: Sequence[str | list[int]], param: str = "input") -> None:
    """Refuse too many inputs, or one too long, before any work (InvalidRequest, 400)."""
    if len(inputs) > MAX_INPUTS:
        raise InvalidRequest(
            f"{param} has {len(inputs)} items; at most {MAX_INPUTS} are embedded in one "
            "request; send them in several",
            param=param,
        )
    for n, item in enumerate(inputs):
        if isinstance(item, str) and len(item) > MAX_INPUT_CHARS:
            raise InvalidRequest(
                f"{param}[{n}] is {len(item)} characters; one input may hold at most "
                f"{MAX_INPUT_TOKENS} tokens ({MAX_INPUT_CHARS} characters); split it",
                param=param,
            )
        if not isinstance(item, str) and len(item) > MAX_INPUT_TOKENS:
            raise InvalidRequest(
                f"{param}[{n}] is {len(item)} tokens; one input may hold at most "
                f"{MAX_INPUT_TOKENS}; split it",
                param=param,
            )


def most_tokens(text: str) -> int:
    """At least as many tokens as any model's tokenizer makes of ``text`` (BOS and the
    like included), without tokenizing it."""
    return len(text.encode("utf-8", "surrogatepass")) * TOKENS_PER_BYTE + TOKENS_ADDED


def _counted(
    engine: Engine, unique: Sequence[str | list[int]], slots: Sequence[int], param: str
) -> list[int | None]:
    """Each distinct input's tokens (a list of ids: its length), counted in order; an input
    over MAX_INPUT_TOKENS, or the request passing MAX_REQUEST_TOKENS (every input as
    sent), is refused as soon as it is counted, not after the rest (InvalidRequest).

    A text sent once whose bound (``most_tokens``) shows it, and the whole request, within
    the limits is not tokenized here (None): each call is a round trip to the model's
    worker, which a short request (an editor's single embedding) would pay twice for
    (issue 47); the embedding counts it."""
    first = {u: n for n, u in reversed(list(enumerate(slots)))}  # where each was first sent
    sent = Counter(slots)
    bounds = [most_tokens(i) if isinstance(i, str) else len(i) for i in unique]
    count_all = sum(b * sent[u] for u, b in enumerate(bounds)) > MAX_REQUEST_TOKENS
    counts: list[int | None] = []
    total = 0
    for u, item in enumerate(unique):
        within = not count_all and sent[u] == 1 and bounds[u] <= MAX_INPUT_TOKENS
        if isinstance(item, str) and within:
            counts.append(None)
            continue
        count = (
            len(engine.tokenize(item, add_bos=True, special=False))
            if isinstance(item, str)
            else len(item)
        )
        if count > MAX_INPUT_TOKENS:
            raise InvalidRequest(
                f"{param}[{first[u]}] is {count} tokens; one input may hold at most "
                f"{MAX_INPUT_TOKENS}; split it",
                param=param,
            )
        total += count * sent[u]
        if total > MAX_REQUEST_TOKENS:
            more = " or more" if u + 1 < len(unique) else ""
            raise InvalidRequest(
                f"{param} is {total} tokens{more} in all; one request may hold at most "
                f"{MAX_REQUEST_TOKENS}; send the inputs in several requests",
                param=param,
            )
        counts.append(count)
    return counts


def embed(
    services: Services,
    model: str,
    inputs: list[str | list[int]],
    cancel: threading.Event | None = None,
    param: str = "input",
) -> tuple[list[list[float]], int]:
    """Vectors for ``inputs`` (cache first) and the prompt token count, in one engine turn.

    Tokens are the model's own count: the local tokenizer's for a text, the ids
    themselves for a list of token ids (embedded as given, never turned into text and
    back), or the remote's ``usage.prompt_tokens`` for what it embedded (texts served from
    the cache, and those of a remote that reports no usage, are estimated by its
    ``tokenize``). Identical inputs are counted and embedded once, each answered in its
    own place. Inputs over the limits are refused before any is embedded; ``cancel`` set
    stops the engine between decodes (Cancelled). Blocks.
    """
    check_inputs(inputs, param)
    # Each distinct input once, in first-seen order; ``slots[n]`` is input n's place in it.
    places: dict[str | tuple[int, ...], int] = {}
    slots = [places.setdefault(i if isinstance(i, str) else tuple(i), len(places)) for i in inputs]
    unique = [i if isinstance(i, str) else list(i) for i in places]

    def work(engine: Engine) -> tuple[list[list[float]], int]:
        counts = _counted(engine, unique, slots, param)
        keys = [
            embedding_key(model, i) if isinstance(i, str) else embedding_ids_key(model, i)
            for i in unique
        ]
        vectors: list[list[float] | None] = [services.embeddings.get(k) for k in keys]
        for v in vectors:
            services.metrics.cache_event("embeddings", v is not None)
        missing = [i for i, v in enumerate(vectors) if v is None]
        counted: int | None = None
        if missing:
            fresh, counted = engine.embed_counted([unique[i] for i in missing], cancel)
            for i, vector in zip(missing, fresh, strict=True):
                vectors[i] = vector
                services.embeddings.put(keys[i], vector)
        embedded = set(missing) if counted is not None else set()
        sent = Counter(slots)
        known: list[int] = []
        for i, (count, item) in enumerate(zip(counts, unique, strict=True)):
            # Not counted yet, and not by the engine: from the cache, or a remote that
            # reports no usage. None left only for one sent once that the engine counted.
            if count is None and i not in embedded and isinstance(item, str):
                known.append(len(engine.tokenize(item, add_bos=True, special=False)))
            else:
                known.append(count or 0)
        tokens = (counted or 0) + sum(known[i] for i in range(len(unique)) if i not in embedded)
        # A repeated input's tokens count each time it was sent, as the client sent them.
        tokens += sum(known[i] * (n - 1) for i, n in sent.items())
        found = [v for v in vectors if v is not None]
        return [found[s] for s in slots], tokens

    result: tuple[list[list[float]], int] = services.scheduler.with_engine(model, work, cancel)
    return result
