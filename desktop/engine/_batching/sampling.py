"""Per-request sampling in C: one ``llama_sampler`` chain per slot, and logprobs.

The chain mirrors llama-cpp-python's high-level ``Llama`` (penalties, grammar, then
greedy or top-k / typical / top-p / min-p / temperature / dist), so greedy output is
token-for-token what ``Llama.create_completion`` gives. Sampling reads the logits row
of one batch index straight from the context; Python touches the vocabulary only for
logprobs and for plain greedy, which is one numpy argmax over that row (the same token,
without copying the row into the chain's candidate array first).
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Callable

import numpy as np

from desktop.base.errors import InvalidRequest
from desktop.engine._llama_cpp import llama_cpp
from desktop.engine._prompting.grammar import gbnf_for
from desktop.engine._types import GenerationParams, TokenLogprob

PENALTY_LAST_N = 64  # llama-cpp-python's last_n_tokens_size default


class SamplerChain:
    """One request's sampler chain; built on the request's thread, used by the decode loop.

    ``sample`` and ``close`` are called only by the engine's decode loop thread once the
    request is admitted (llama_sampler objects are not thread-safe).
    """

    def __init__(
        self, vocab: llama_cpp.llama_vocab_p, n_vocab: int, params: GenerationParams
    ) -> None:
        grammar = gbnf_for(params)  # raises InvalidRequest for a bad schema, before any work
        self.n_vocab = n_vocab
        self._argmax = False
        self._chain = llama_cpp.llama_sampler_chain_init(
            llama_cpp.llama_sampler_chain_default_params()
        )
        add = self._add
        if (
            params.repeat_penalty != 1.0
            or params.frequency_penalty != 0.0
            or params.presence_penalty != 0.0
        ):
            add(
                llama_cpp.llama_sampler_init_penalties(
                    n_vocab,
                    PENALTY_LAST_N,
                    params.repeat_penalty,
                    params.frequency_penalty,
                    params.presence_penalty,
                )
            )
        if grammar is not None:
            sampler = llama_cpp.llama_sampler_init_grammar(vocab, grammar.encode("utf-8"), b"root")
            if not sampler:
                self.close()
                which = "json_schema" if params.json_schema else "grammar"
                raise InvalidRequest(
                    f"invalid {which}: llama.cpp could not parse the grammar", param=which
                )
            add(sampler)
        # Plain greedy (no penalties, no grammar) is an argmax over the logits row, which
        # numpy does ~15x faster than the chain (0.04 vs 0.6 ms on a 262k vocabulary):
        # the chain first copies the whole row into a candidate array. Same token: both
        # take the first of equal maxima. This time is spent on the decode thread,
        # before the next decode can start, once per generating slot.
        self._argmax = params.temperature <= 0.0 and not self._has_samplers()
        if params.temperature <= 0.0:
            add(llama_cpp.llama_sampler_init_greedy())
        else:
            seed = params.seed if params.seed is not None else secrets.randbits(32)
            add(llama_cpp.llama_sampler_init_top_k(params.top_k))
            add(llama_cpp.llama_sampler_init_typical(1.0, 1))
            add(llama_cpp.llama_sampler_init_top_p(params.top_p, 1))
            add(llama_cpp.llama_sampler_init_min_p(params.min_p, 1))
            add(llama_cpp.llama_sampler_init_temp(params.temperature))
            add(llama_cpp.llama_sampler_init_dist(seed & 0xFFFFFFFF))

    def _add(self, sampler: llama_cpp.llama_sampler_p) -> None:
        llama_cpp.llama_sampler_chain_add(self._chain, sampler)

    def _has_samplers(self) -> bool:
        return int(llama_cpp.llama_sampler_chain_n(self._chain)) > 0

    def sample(self, ctx: llama_cpp.llama_context_p, index: int) -> int:
        """Sample (and accept) the next token from batch row ``index`` of the last decode."""
        if self._argmax:  # greedy keeps no state, so there is nothing to accept
            row = llama_cpp.llama_get_logits_ith(ctx, index)
            return int(np.ctypeslib.as_array(row, shape=(self.n_vocab,)).argmax())
        return int(llama_cpp.llama_sampler_sample(self._chain, ctx, index))

    def close(self) -> None:
        """Free the chain (and every sampler in it); safe to call twice."""
        if self._chain is not None:
            llama_cpp.llama_sampler_free(self._chain)
            self._chain = None


def token_logprob(
    ctx: llama_cpp.llama_context_p,
    index: int,
    *,
    n_vocab: int,
    token: int,
    top: int,
    piece: Callable[[int], str],
) -> TokenLogprob:
    """Log-softmax of the raw logits at batch row ``index``: the token's and the best ``top``.

    Read right after sampling, before the next decode overwrites the row; this avoids
    keeping logits for every prompt token.
    """
    pointer = llama_cpp.llama_get_logits_ith(ctx, index)
    logits = np.ctypeslib.as_array(pointer, shape=(n_vocab,)).astype(np.float64)
    peak = float(logits.max())
    logprobs = logits - (peak + math.log(float(np.exp(logits - peak).sum())))
    best: tuple[tuple[str, float], ...] = ()
    if top > 0:
        ids = np.argpartition(-logprobs, min(top, n_vocab - 1))[:top]
        ids = ids[np.argsort(-logprobs[ids], kind="stable")]
        best = tuple((piece(int(i)), float(logprobs[i])) for i in ids)
    return TokenLogprob(piece(token), float(logprobs[token]), best)
