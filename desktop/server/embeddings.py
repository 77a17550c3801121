"""Embedding texts for the API (OpenAI's ``/v1/embeddings``, Ollama's ``/api/embed``
and ``/api/embeddings``), within the documented size limits (docs/api.md).

A request is bounded twice: its size is refused up front with a 400 naming the limit
(``check_inputs``, then each input's tokens), and its client leaving sets the cancel
event the engine checks between decodes.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from desktop.base.errors import InvalidRequest
from desktop.engine.protocol import Engine
from desktop.server.cache import embedding_key
from desktop.server.services import Services

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


def _check_tokens(counts: Sequence[int], param: str) -> None:
    for n, count in enumerate(counts):
        if count > MAX_INPUT_TOKENS:
            raise InvalidRequest(
                f"{param}[{n}] is {count} tokens; one input may hold at most "
                f"{MAX_INPUT_TOKENS}; split it",
                param=param,
            )
    if sum(counts) > MAX_REQUEST_TOKENS:
        raise InvalidRequest(
            f"{param} is {sum(counts)} tokens in all; one request may hold at most "
            f"{MAX_REQUEST_TOKENS}; send the inputs in several requests",
            param=param,
        )


def embed(
    services: Services,
    model: str,
    inputs: list[str | list[int]],
    cancel: threading.Event | None = None,
    param: str = "input",
) -> tuple[list[list[float]], int]:
    """Vectors for ``inputs`` (cache first) and the prompt token count, in one engine turn.

    Tokens are the model's own count: the local tokenizer's, or the remote's
    ``usage.prompt_tokens`` for the texts it embedded (texts served from the cache, and
    those of a remote that reports no usage, are estimated by its ``tokenize``). Inputs
    over the limits are refused before any is embedded; ``cancel`` set stops the
    engine between decodes (Cancelled). Blocks.
    """
    check_inputs(inputs, param)

    def work(engine: Engine) -> tuple[list[list[float]], int]:
        texts = [i if isinstance(i, str) else engine.detokenize(i) for i in inputs]
        counts: dict[int, int] = {}  # the inputs tokenized so far: their tokens

        def count(indexes: Sequence[int]) -> None:
            for i in indexes:
                if i not in counts:
                    counts[i] = len(engine.tokenize(texts[i], add_bos=True, special=False))

        # Tokenized only where a bound cannot show the input is within the limits: each
        # call is a round trip to the model's worker, which a short request (an
        # editor's single embedding) would pay twice for (issue 47).
        bounds = [most_tokens(t) for t in texts]
        if sum(bounds) > MAX_REQUEST_TOKENS:
            count(range(len(texts)))
        else:
            count([i for i, bound in enumerate(bounds) if bound > MAX_INPUT_TOKENS])
        _check_tokens([counts.get(i, 0) for i in range(len(texts))], param)
        keys = [embedding_key(model, t) for t in texts]
        vectors: list[list[float] | None] = [services.embeddings.get(k) for k in keys]
        for v in vectors:
            services.metrics.cache_event("embeddings", v is not None)
        missing = [i for i, v in enumerate(vectors) if v is None]
        counted: int | None = None
        if missing:
            fresh, counted = engine.embed_counted([texts[i] for i in missing], cancel)
            for i, vector in zip(missing, fresh, strict=True):
                vectors[i] = vector
                services.embeddings.put(keys[i], vector)
        embedded = set(missing) if counted is not None else set()
        estimated = [i for i in range(len(texts)) if i not in embedded]
        count(estimated)  # served from the cache, or by an engine that counts nothing
        tokens = (counted or 0) + sum(counts[i] for i in estimated)
        return [v for v in vectors if v is not None], tokens

    result: tuple[list[list[float]], int] = services.scheduler.with_engine(model, work, cancel)
    return result
