"""The only code that touches llama.cpp: load, stream chat and completions, embed.

Every call blocks the calling thread; streaming calls are iterators that stop within
one token of ``cancel`` being set. The engine takes a file path and load options, never
a catalog entry, so it can be tested with any GGUF.
"""

from __future__ import annotations

import contextlib
import json
import math
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import llama_cpp
import numpy as np
from llama_cpp.llama_cache import LlamaRAMCache
from llama_cpp.llama_grammar import LlamaGrammar

from desktop.engine.grammar import gbnf_for
from desktop.engine.templates import ResolvedTemplate, ThinkSplitter, render_chat, resolve_template
from desktop.engine.types import (
    Chunk,
    FinishReason,
    GenerationParams,
    Message,
    Timings,
    TokenLogprob,
    Usage,
)
from desktop.errors import ContextOverflow, InvalidRequest, ModelLoadError

_NEVER = threading.Event()
RANK_POOLING = 4  # llama.cpp LLAMA_POOLING_TYPE_RANK: one relevance score per sequence


def gpu_offload_supported() -> bool:
    """Whether this llama.cpp build can put layers on a GPU (CUDA, Metal, Vulkan…)."""
    return bool(llama_cpp.llama_supports_gpu_offload())


@dataclass(frozen=True)
class LoadOptions:
    """How to load one model file; already fitted to the machine by the caller."""

    context_length: int
    gpu_layers: int = 0
    threads: int | None = None
    embedding: bool = False
    state_cache_bytes: int = 512 * 1024 * 1024
    seed: int = 0


class _CountingLlama(llama_cpp.Llama):
    """llama_cpp.Llama that counts what it evaluates and samples, so prefix reuse shows."""

    evaluated_tokens = 0  # since load
    request_prompt_evaluated = 0  # prompt tokens actually decoded for the current request
    request_sampled = 0
    logprob_top: int | None = None  # record logprobs (with this many alternatives) if set
    request_logprobs: list[TokenLogprob]

    def begin_request(self, logprob_top: int | None = None) -> None:
        self.request_prompt_evaluated = 0
        self.request_sampled = 0
        self.logprob_top = logprob_top
        self.request_logprobs = []

    def eval(self, tokens: Sequence[int]) -> None:
        self.evaluated_tokens += len(tokens)
        if self.request_sampled == 0:
            self.request_prompt_evaluated += len(tokens)
        super().eval(tokens)

    def generate(self, *args: Any, **kwargs: Any) -> Iterator[int]:  # type: ignore[override]
        for token in super().generate(*args, **kwargs):
            self.request_sampled += 1
            if self.logprob_top is not None:
                self._record_logprob(token, self.logprob_top)
            yield token

    def _record_logprob(self, token: int, top: int) -> None:
        """Log-softmax of the logits ``token`` was sampled from (the last decoded row).

        Read now, before the next decode overwrites them; this avoids ``logits_all``,
        which would keep a row per prompt token for every request.
        """
        vocab = self._model.vocab
        if llama_cpp.llama_vocab_is_eog(vocab, token):
            return  # end of generation: never part of the text, so not reported
        n_vocab = int(self._n_vocab)
        pointer = llama_cpp.llama_get_logits_ith(self._ctx.ctx, -1)
        logits = np.ctypeslib.as_array(pointer, shape=(n_vocab,)).astype(np.float64)
        peak = float(logits.max())
        logprobs = logits - (peak + math.log(float(np.exp(logits - peak).sum())))
        best: tuple[tuple[str, float], ...] = ()
        if top > 0:
            ids = np.argpartition(-logprobs, min(top, n_vocab - 1))[:top]
            ids = ids[np.argsort(-logprobs[ids], kind="stable")]
            best = tuple((self._piece(int(i)), float(logprobs[i])) for i in ids)
        self.request_logprobs.append(
            TokenLogprob(self._piece(token), float(logprobs[token]), best))

    def _piece(self, token: int) -> str:
        return bytes(self.detokenize([token])).decode("utf-8", errors="replace")


class LlamaEngine:
    """One loaded model; not thread-safe: the scheduler serialises calls."""

    def __init__(self, path: Path, options: LoadOptions, *, model_id: str = "",
                 chat_template: str | None = None, reasoning: bool = False) -> None:
        self.path = path
        self.options = options
        self.model_id = model_id or path.stem
        self._reasoning = reasoning
        self._catalog_template = chat_template
        self._llm = self._load(path, options)
        self.embed_decodes = 0  # decode calls spent on embeddings (batching shows here)
        self._template: ResolvedTemplate | None = None

    @staticmethod
    def _load(path: Path, options: LoadOptions) -> Any:
        kwargs: dict[str, Any] = {
            "model_path": str(path),
            "n_ctx": options.context_length,
            "n_gpu_layers": options.gpu_layers if gpu_offload_supported() else 0,
            "n_threads": options.threads,
            "seed": options.seed,
            "use_mmap": True,
            "verbose": False,
        }
        if options.embedding:
            # Non-causal encoders need the whole input in one micro-batch.
            kwargs.update(embedding=True, n_batch=options.context_length,
                          n_ubatch=options.context_length)
        try:
            llm = _CountingLlama(**kwargs)
        except (ValueError, RuntimeError, OSError) as exc:
            raise ModelLoadError(f"llama.cpp could not load {path.name}: {exc}") from None
        if not options.embedding and options.state_cache_bytes > 0:
            # Keeps the KV state of recent conversations so switching back is cheap.
            llm.set_cache(LlamaRAMCache(capacity_bytes=options.state_cache_bytes))
        return llm

    # ------------------------------------------------------------------ facts
    @property
    def context_length(self) -> int:
        """The context window the model was loaded with."""
        return int(self._llm.n_ctx())

    @property
    def metadata(self) -> dict[str, str]:
        """The GGUF metadata as llama.cpp read it."""
        return dict(self._llm.metadata)

    @property
    def evaluated_tokens(self) -> int:
        """Total tokens pushed through the model since load (prompt and generated)."""
        return int(self._llm.evaluated_tokens)

    def embedding_dim(self) -> int:
        """Width of the model's embedding vectors."""
        return int(self._llm.n_embd())

    def tokenize(self, text: str, *, add_bos: bool = True, special: bool = True) -> list[int]:
        """The model's own tokens for ``text``."""
        return list(self._llm.tokenize(text.encode("utf-8"), add_bos=add_bos, special=special))

    def detokenize(self, tokens: Sequence[int]) -> str:
        """Text for ``tokens`` (invalid UTF-8 is replaced); ids outside the vocabulary raise."""
        n_vocab = int(self._llm.n_vocab())
        bad = next((t for t in tokens if not 0 <= t < n_vocab), None)
        if bad is not None:  # llama.cpp reads out of bounds (and crashes) on these
            raise InvalidRequest(f"token id {bad} is outside the model's vocabulary "
                                 f"(0 to {n_vocab - 1})", param="prompt")
        return bytes(self._llm.detokenize(list(tokens))).decode("utf-8", errors="replace")

    def _token_text(self, token_id: int) -> str:
        if token_id < 0:
            return ""
        return self.detokenize([token_id]) if token_id >= 0 else ""

    # ------------------------------------------------------------------ chat
    def template(self) -> ResolvedTemplate:
        """The chat template in use (resolved once; raises TemplateMissing)."""
        if self._template is None:
            meta = self.metadata
            self._template = resolve_template(
                model_name=self.model_id,
                architecture=meta.get("general.architecture", "unknown"),
                gguf_template=meta.get("tokenizer.chat_template"),
                catalog_template=self._catalog_template,
                bos_token=self._token_text(self._llm.token_bos()),
                eos_token=self._token_text(self._llm.token_eos()),
            )
        return self._template

    def render(self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None = None,
               template_kwargs: Mapping[str, Any] | None = None) -> str:
        """The prompt text for a conversation (``template_kwargs`` go to the template)."""
        template = self.template()
        if tools and "tools" not in template.text:
            # The template cannot show tools, so describe them in a system turn instead
            # of dropping them silently.
            messages = _tools_system_turn(tools, messages)
        return render_chat(template, messages, tools=tools, extra=template_kwargs)

    def prompt_tokens(self, prompt: str) -> list[int]:
        """Tokens for a rendered prompt, adding BOS only if the template did not."""
        template = self._template
        has_bos = bool(template and template.bos_token and prompt.startswith(template.bos_token))
        return self.tokenize(prompt, add_bos=not has_bos, special=True)

    def stream_chat(self, messages: Sequence[Message], params: GenerationParams,
                    cancel: threading.Event | None = None,
                    tools: Sequence[dict[str, Any]] | None = None,
                    template_kwargs: Mapping[str, Any] | None = None) -> Iterator[Chunk]:
        """Stream the assistant's answer to ``messages``."""
        prompt = self.render(messages, tools, template_kwargs)
        stops = tuple(dict.fromkeys((*params.stop, *self.template().stop_strings())))
        starts_thinking = prompt.rstrip().endswith(ThinkSplitter.OPEN)
        splitter = ThinkSplitter(enabled=self._reasoning, start_in_reasoning=starts_thinking)
        yield from self._stream(self.prompt_tokens(prompt), params, cancel, stops, splitter)

    def stream_completion(self, prompt: str, params: GenerationParams,
                          cancel: threading.Event | None = None) -> Iterator[Chunk]:
        """Stream a plain-text continuation of ``prompt`` (no chat template)."""
        tokens = self.tokenize(prompt, add_bos=True, special=False)
        yield from self._stream(tokens, params, cancel, params.stop, ThinkSplitter(enabled=False))

    def fim_tokens(self) -> tuple[int, int, int] | None:
        """The model's fill-in-the-middle prefix/suffix/middle token ids, if it has them."""
        vocab = self._llm._model.vocab
        ids = (int(llama_cpp.llama_vocab_fim_pre(vocab)), int(llama_cpp.llama_vocab_fim_suf(vocab)),
               int(llama_cpp.llama_vocab_fim_mid(vocab)))
        return None if min(ids) < 0 else ids

    def infill_tokens(self, prefix: str, suffix: str) -> list[int]:
        """``[BOS] FIM_PRE prefix FIM_SUF suffix FIM_MID``, as llama.cpp's own server builds it."""
        fim = self.fim_tokens()
        if fim is None:
            raise InvalidRequest(
                f"{self.model_id} has no fill-in-the-middle tokens, so suffix cannot be "
                "used; send the prompt alone or pick a code model with FIM support",
                param="suffix")
        pre, suf, mid = fim
        vocab = self._llm._model.vocab
        bos = int(llama_cpp.llama_vocab_bos(vocab))
        head = [bos] if llama_cpp.llama_vocab_get_add_bos(vocab) and bos >= 0 else []
        return [*head, pre, *self.tokenize(prefix, add_bos=False, special=False), suf,
                *self.tokenize(suffix, add_bos=False, special=False), mid]

    def stream_infill(self, prefix: str, suffix: str, params: GenerationParams,
                      cancel: threading.Event | None = None) -> Iterator[Chunk]:
        """Stream the text that belongs between ``prefix`` and ``suffix`` (code models)."""
        tokens = self.infill_tokens(prefix, suffix)
        yield from self._stream(tokens, params, cancel, params.stop, ThinkSplitter(enabled=False))

    def _stream(self, tokens: list[int], params: GenerationParams,
                cancel: threading.Event | None, stops: Sequence[str],
                splitter: ThinkSplitter) -> Iterator[Chunk]:
        cancel = cancel or _NEVER
        n_ctx = self.context_length
        if len(tokens) >= n_ctx:
            raise ContextOverflow(
                f"the prompt is {len(tokens)} tokens but the model's context is {n_ctx}; "
                "shorten the conversation or load the model with a larger context"
            )
        if params.max_tokens is not None and params.max_tokens < 1:
            raise InvalidRequest("max_tokens must be at least 1", param="max_tokens")
        grammar = _grammar(params)
        started = time.perf_counter()
        llm = self._llm
        llm.begin_request(params.logprobs)
        limit = params.max_tokens if params.max_tokens is not None else n_ctx
        deadline = started + params.timeout_s if params.timeout_s is not None else math.inf

        def should_stop(_ids: Any, _logits: Any) -> bool:
            # Runs inside llama.cpp's loop after every sampled token, so a cancel lands
            # within one token even while text is held back for stop strings.
            return (cancel.is_set() or llm.request_sampled >= limit
                    or time.perf_counter() > deadline)

        stream = llm.create_completion(
            tokens,
            max_tokens=limit,
            temperature=params.temperature,
            top_p=params.top_p,
            top_k=params.top_k,
            min_p=params.min_p,
            repeat_penalty=params.repeat_penalty,
            presence_penalty=params.presence_penalty,
            frequency_penalty=params.frequency_penalty,
            stop=list(stops),
            seed=params.seed,
            grammar=grammar,
            stopping_criteria=llama_cpp.StoppingCriteriaList([should_stop]),
            stream=True,
        )
        first_at: float | None = None
        stopped_by_model = False
        reported = 0  # logprobs already attached to a chunk

        def new_logprobs() -> tuple[TokenLogprob, ...]:
            nonlocal reported
            fresh = tuple(llm.request_logprobs[reported:])
            reported += len(fresh)
            return fresh

        try:
            for part in stream:
                choice = part["choices"][0]
                content, reasoning = splitter.feed(choice.get("text") or "")
                if content or reasoning:
                    if first_at is None:
                        first_at = time.perf_counter()
                    yield Chunk(text=content, reasoning=reasoning, logprobs=new_logprobs())
                if choice.get("finish_reason") == "stop":
                    stopped_by_model = True
                if cancel.is_set():
                    break
        finally:
            with contextlib.suppress(Exception):
                stream.close()
        finish: FinishReason
        if cancel.is_set():
            finish = "cancelled"
        elif time.perf_counter() > deadline:
            finish = "timeout"
        elif llm.request_sampled >= limit or not stopped_by_model:
            finish = "length"
        else:
            finish = "stop"
        content, reasoning = splitter.flush()
        end = time.perf_counter()
        first = first_at if first_at is not None else end
        evaluated = self._llm.request_prompt_evaluated
        yield Chunk(
            text=content,
            reasoning=reasoning,
            finish_reason=finish,
            usage=Usage(len(tokens), self._llm.request_sampled, max(0, len(tokens) - evaluated)),
            timings=Timings(prompt_s=first - started, time_to_first_token_s=first - started,
                            generation_s=end - first),
            logprobs=new_logprobs(),
        )

    # ------------------------------------------------------------------ embeddings
    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-length vectors for ``texts``; long texts are windowed and pooled, not cut."""
        if not self.options.embedding:
            raise InvalidRequest(f"{self.model_id} is not loaded as an embedding model")
        window = min(self.context_length, int(self._llm.n_batch))
        sequences: list[list[int]] = []
        plan: list[list[int]] = []  # per input: indexes of its windows in ``sequences``
        for text in texts:
            tokens = self.tokenize(text, add_bos=True, special=False)
            if len(tokens) <= window:
                plan.append([len(sequences)])
                sequences.append(tokens)
                continue
            head, body, tail = self._split_specials(tokens)
            step = max(1, window - len(head) - len(tail))
            indexes = []
            for start in range(0, len(body), step):
                indexes.append(len(sequences))
                sequences.append(head + body[start : start + step] + tail)
            plan.append(indexes)
        vectors = self._decode_embeddings(sequences)
        return [
            _pool([vectors[i] for i in idx], [len(sequences[i]) for i in idx]) for idx in plan
        ]

    def _split_specials(self, tokens: list[int]) -> tuple[list[int], list[int], list[int]]:
        model = self._llm._model
        starts = {model.token_bos(), model.token_cls()} - {-1}
        ends = {model.token_eos(), model.token_sep()} - {-1}
        head = tokens[:1] if tokens and tokens[0] in starts else []
        tail = tokens[-1:] if len(tokens) > len(head) and tokens[-1] in ends else []
        return head, tokens[len(head) : len(tokens) - len(tail)], tail

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        """Relevance of each document to ``query`` from a rank-pooling model (higher = better).

        Pairs are laid out as llama.cpp's server does: ``[BOS] query [EOS] [SEP] doc [EOS]``
        (for XLM-R rerankers such as bge-reranker-v2-m3 that is ``<s> q </s></s> d </s>``).
        A document longer than the window is cut to fit, keeping the whole query; a
        reranker only orders candidates, and the caller still has every full text.
        """
        if not self.options.embedding or int(self._llm.pooling_type()) != RANK_POOLING:
            raise InvalidRequest(f"{self.model_id} is not a reranking model (no rank pooling)")
        model = self._llm._model
        sep, eos = model.token_sep(), model.token_eos()
        close = [eos] if eos != -1 else [sep] if sep != -1 else []
        head = self.tokenize(query, add_bos=True, special=False)
        head += [sep] if sep != -1 else []
        window = min(self.context_length, int(self._llm.n_batch))
        room = window - len(head) - len(close)
        if room < 1:
            raise ContextOverflow(f"the query is {len(head)} tokens; the reranker's window "
                                  f"is {window}")
        sequences = [head + self.tokenize(doc, add_bos=False, special=False)[:room] + close
                     for doc in documents]
        return [vector[0] for vector in self._decode_embeddings(sequences, width=1)]

    def _decode_embeddings(self, sequences: list[list[int]], width: int | None = None
                           ) -> list[list[float]]:
        """Pooled outputs for token sequences, packing as many as fit into each decode."""
        llm = self._llm
        n_batch = int(llm.n_batch)
        n_embd = width if width is not None else int(llm.n_embd())
        n_seq_max = int(llm.context_params.n_seq_max)
        batch, ctx = llm._batch, llm._ctx
        out: list[list[float]] = []

        def flush(count: int) -> None:
            ctx.kv_cache_clear()
            ctx.decode(batch)
            batch.reset()
            self.embed_decodes += 1
            for seq in range(count):
                pointer = llama_cpp.llama_get_embeddings_seq(ctx.ctx, seq)
                out.append([float(x) for x in pointer[:n_embd]])

        batch.reset()
        used = count = 0
        for tokens in sequences:
            if count and (used + len(tokens) > n_batch or count >= n_seq_max):
                flush(count)
                used = count = 0
            batch.add_sequence(tokens, count, True)
            used += len(tokens)
            count += 1
        if count:
            flush(count)
        ctx.kv_cache_clear()
        llm.reset()
        return out

    def close(self) -> None:
        """Free the model's memory now rather than at garbage collection."""
        with contextlib.suppress(Exception):
            self._llm.close()


def _tools_system_turn(tools: Sequence[dict[str, Any]], messages: Sequence[Message]
                       ) -> list[Message]:
    """Messages with the tool list (and the <tool_call> reply format) in the system turn."""
    listing = "\n".join(json.dumps(t, ensure_ascii=False) for t in tools)
    text = ("You may call these tools:\n" + listing + "\nTo call one, reply with "
            '<tool_call>{"name": NAME, "arguments": {...}}</tool_call>.')
    if messages and messages[0].role == "system":
        first = messages[0]
        return [replace(first, content=f"{first.content}\n\n{text}"), *messages[1:]]
    return [Message("system", text), *messages]


def _grammar(params: GenerationParams) -> LlamaGrammar | None:
    """The sampling grammar for ``params``: GBNF text, or one built from a JSON schema."""
    text = gbnf_for(params)
    if text is None:
        return None
    try:
        return LlamaGrammar.from_string(text, verbose=False)
    except (ValueError, RuntimeError, KeyError, TypeError) as exc:
        which = "json_schema" if params.json_schema else "grammar"
        raise InvalidRequest(f"invalid {which}: {exc}", param=which) from None


def _pool(vectors: Sequence[Sequence[float]], weights: Sequence[int]) -> list[float]:
    """Token-weighted mean of window vectors, then L2-normalised."""
    if len(vectors) == 1:
        pooled = list(vectors[0])
    else:
        total = float(sum(weights))
        pooled = [sum(v[d] * w for v, w in zip(vectors, weights, strict=True)) / total
                  for d in range(len(vectors[0]))]
    norm = math.sqrt(sum(x * x for x in pooled))
    return [x / norm for x in pooled] if norm > 0 else pooled
