"""The only code that touches llama.cpp: load, stream chat and completions, embed.

A chat model serves up to ``LoadOptions.parallel`` streams at once: each request
thread hands its prompt to the engine's decode loop (``_batching/``), which runs
all of them in shared decodes, and reads its tokens back from its own queue. The
engine takes a file path and load options, never a catalog entry, so it can be tested
with any GGUF.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import math
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from desktop.base.defaults import RANK_POOLING, physical_cores
from desktop.base.errors import (
    ContextOverflow,
    InvalidRequest,
    ModelLoadError,
    VisionUnsupported,
    prompt_size_params,
)
from desktop.engine._batching.answer_stream import read_answer
from desktop.engine._batching.loop import DecodeLoop, StepObserver
from desktop.engine._batching.sampling import SamplerChain
from desktop.engine._batching.slots import Request
from desktop.engine._embedding import EmbedLoop, pool
from desktop.engine._hardware.placement import model_placement
from desktop.engine._llama_cpp import llama_cpp
from desktop.engine._native import LoadOptions, load_context, warm_up
from desktop.engine._overlong import refuse_overlong
from desktop.engine._prompting.templates import (
    ResolvedTemplate,
    ThinkSplitter,
    render_chat,
    resolve_template,
)
from desktop.engine._prompting.toolcalls import gate_calls
from desktop.engine._prompting.volatile import stable_messages
from desktop.engine._types import (
    ADMITTED,
    ChatCall,
    Delta,
    EngineStats,
    GenerationParams,
    Message,
    Placement,
)
from desktop.engine._vision import ImageTokens, Projector

_NEVER = threading.Event()


class LlamaEngine:
    """One loaded model; serves ``parallel`` streams and any number of embed calls at once.

    Threads: ``stream_chat``, ``stream_completion``, ``stream_infill``, ``embed``,
    ``rerank``, ``tokenize``, ``detokenize``, ``render``, ``template`` and ``stats`` may
    be called from any thread, concurrently. Each stream's iterator is consumed by one
    thread; each begins with ``_types.ADMITTED`` once the request passed its checks (the
    refusals are raised before it), then the answer's deltas. A decode loop thread,
    started here and stopped by ``close()``, makes every llama_decode call. ``close()``
    may be called only when no call is in flight.
    ``on_step`` / ``on_embed_decode`` are called on the loop thread after each decode
    (tests and benchmarks watch the batching through them).
    """

    def __init__(
        self,
        path: Path,
        options: LoadOptions,
        *,
        model_id: str = "",
        chat_template: str | None = None,
        reasoning: bool = False,
        on_step: StepObserver | None = None,
        on_embed_decode: Callable[[int], None] | None = None,
    ) -> None:
        self.path = path
        self.options = options
        self.model_id = model_id or path.stem
        self._reasoning = reasoning
        self._catalog_template = chat_template
        self._template: ResolvedTemplate | None = None
        self._template_lock = threading.Lock()
        self._pieces: dict[int, bytes] = {}
        self._model, self._ctx = load_context(path, options)
        self._vocab = self._model.vocab
        self._n_vocab = int(llama_cpp.llama_vocab_n_tokens(self._vocab))
        self._loop: DecodeLoop | None = None
        self._embedder: EmbedLoop | None = None
        self._projector: Projector | None = None
        try:
            warm_up(self._ctx, self._vocab, path.name)
            if options.projector is not None and not options.embedding:
                # As many threads as the model's prompt decodes (llama-server does the
                # same): a lone picture, the desktop's usual case, is encoded fastest.
                cores = options.batch_threads or options.threads or physical_cores()
                self._projector = Projector(
                    self._model.model,
                    options.projector,
                    threads=cores,
                    use_gpu=options.gpu_layers > 0,
                )
        except ModelLoadError:
            self._free()
            raise
        # Where llama.cpp put the layers, asked once now that the model is loaded.
        self.placement: Placement = model_placement(
            self._model.model, options.gpu_layers, options.n_cpu_moe
        )
        n_batch = int(llama_cpp.llama_n_batch(self._ctx))
        if options.embedding:
            self._embedder = EmbedLoop(
                self._ctx,
                n_batch=n_batch,
                n_seq_max=int(llama_cpp.llama_n_seq_max(self._ctx)),
                on_decode=on_embed_decode,
            )
        else:
            n_swa = int(llama_cpp.llama_model_n_swa(self._model.model))
            self._loop = DecodeLoop(
                self._ctx,
                self._vocab,
                n_vocab=self._n_vocab,
                n_batch=n_batch,
                n_slots=self.parallel,
                n_ctx=self.context_length,
                n_swa=n_swa,
                piece=self._piece_text,
                swa_full=options.swa_full,
                state_cache_bytes=options.state_cache_bytes,
                state_disk=_state_folder(path, options, n_swa),
                state_disk_bytes=options.prompt_cache_disk_bytes,
                state_disk_key=options.prompt_cache_key,
                draft_max=options.lookup_draft,
                on_step=on_step,
                # as load_context made it: one stream of cells unless SWA layers keep
                # every position (then one stream per slot)
                shared_cells=options.kv_unified and not (n_swa > 0 and options.swa_full),
            )

    # ------------------------------------------------------------------ facts
    @property
    def parallel(self) -> int:
        """How many generation streams run at once (slots), as loaded.

        Embedding models keep it too, though they have no slots: any number of their
        embed/rerank calls may run at once (they are merged into shared decodes), and a
        scheduler that serialises engines with ``parallel == 1`` must not do so to them.
        """
        return max(1, self.options.parallel)

    @property
    def context_length(self) -> int:
        """The context one request may use (the whole cache, shared by the slots)."""
        if self.options.embedding:
            return int(llama_cpp.llama_n_ctx(self._ctx))
        return int(llama_cpp.llama_n_ctx_seq(self._ctx))

    @property
    def vision(self) -> bool:
        """Whether this model was loaded with a vision projector (it can read images)."""
        return self._projector is not None

    @property
    def metadata(self) -> dict[str, str]:
        """The GGUF metadata as llama.cpp read it."""
        return dict(self._model.metadata())

    @property
    def evaluated_tokens(self) -> int:
        """Total tokens pushed through the model since load (prompt and generated)."""
        return self.stats().tokens_decoded

    @property
    def embeds_cancelled(self) -> int:
        """Embed/rerank calls stopped by their cancel event (the client left) since load."""
        return self._embedder.cancelled if self._embedder is not None else 0

    @property
    def embed_decodes(self) -> int:
        """Decode calls spent on embeddings (fewer than calls when callers shared one)."""
        return self._embedder.decodes if self._embedder is not None else 0

    def stats(self) -> EngineStats:
        """What the engine has done since load: slots, prompt tokens, decodes."""
        if self._loop is None:
            return EngineStats(
                slots_total=0,
                embed_decodes=self.embed_decodes,
                embeds_cancelled=self.embeds_cancelled,
            )
        encoded = self._projector.encodes if self._projector is not None else 0
        return replace(self._loop.stats(), embed_decodes=self.embed_decodes, images_encoded=encoded)

    def forget_saved(self) -> None:
        """Any thread: drop the conversations this engine keeps for reuse (its RAM copies,
        their disk files, idle slots) before its next request (``DecodeLoop.forget``)."""
        if self._loop is not None:
            self._loop.forget()

    def embedding_dim(self) -> int:
        """Width of the model's embedding vectors."""
        return int(llama_cpp.llama_model_n_embd(self._model.model))

    def tokenize(self, text: str, *, add_bos: bool = True, special: bool = True) -> list[int]:
        """The model's own tokens for ``text``."""
        return list(self._model.tokenize(text.encode("utf-8"), add_bos=add_bos, special=special))

    def _check_ids(self, tokens: Sequence[int], param: str) -> None:
        """InvalidRequest naming ``param`` for the first id outside the vocabulary."""
        bad = next((t for t in tokens if not 0 <= t < self._n_vocab), None)
        if bad is not None:  # llama.cpp reads out of bounds (and crashes) on these
            raise InvalidRequest(
                f"token id {bad} is outside the model's vocabulary (0 to {self._n_vocab - 1})",
                param=param,
            )

    def detokenize(self, tokens: Sequence[int]) -> str:
        """Text for ``tokens`` (invalid UTF-8 is replaced); ids outside the vocabulary raise."""
        self._check_ids(tokens, "prompt")
        return bytes(self._model.detokenize(list(tokens))).decode("utf-8", errors="replace")

    def _piece(self, token: int) -> bytes:
        """The bytes one generated token adds to the text (cached; pieces never change)."""
        piece = self._pieces.get(token)
        if piece is None:
            size = 64
            while True:
                buffer = ctypes.create_string_buffer(size)
                n = llama_cpp.llama_token_to_piece(self._vocab, token, buffer, size, 0, False)
                if n <= size:
                    break
                size = n
            piece = buffer.raw[: max(0, n)]
            self._pieces[token] = piece
        return piece

    def _piece_text(self, token: int) -> str:
        return self._piece(token).decode("utf-8", errors="replace")

    def _token_text(self, token_id: int) -> str:
        return self.detokenize([token_id]) if token_id >= 0 else ""

    # ------------------------------------------------------------------ chat
    def template(self) -> ResolvedTemplate:
        """The chat template in use (resolved once; raises TemplateMissing)."""
        with self._template_lock:
            if self._template is None:
                meta = self.metadata
                self._template = resolve_template(
                    model_name=self.model_id,
                    architecture=meta.get("general.architecture", "unknown"),
                    gguf_template=meta.get("tokenizer.chat_template"),
                    catalog_template=self._catalog_template,
                    bos_token=self._token_text(self._model.token_bos()),
                    eos_token=self._token_text(self._model.token_eos()),
                )
            return self._template

    def render(self, call: ChatCall) -> str:
        """The prompt text for a chat call (its ``template_kwargs`` go to the template).

        Volatile lines in system turns (``volatile.VOLATILE_PATTERNS``: a per-request
        billing header) are left out, so the next turn reuses the cached prefix.
        """
        return self._render(call.messages, call)

    def _render(self, messages: Sequence[Message], call: ChatCall) -> str:
        template = self.template()
        messages = stable_messages(messages)
        tools = call.openai_tools()
        if tools and "tools" not in template.text:
            # The template cannot show tools, so describe them in a system turn instead
            # of dropping them silently.
            messages = _tools_system_turn(tools, messages)
        return render_chat(template, messages, tools=tools, extra=call.template_kwargs)

    def prompt_tokens(self, prompt: str) -> list[int]:
        """Tokens for a rendered prompt, adding BOS only if the template did not."""
        template = self._template
        has_bos = bool(template and template.bos_token and prompt.startswith(template.bos_token))
        return self.tokenize(prompt, add_bos=not has_bos, special=True)

    def _refuse_overlong(self, text: str, *, special: bool) -> None:
        """Raise ContextOverflow when ``text`` surely holds more tokens than the context,
        having tokenized about a context's worth of it, not all of it
        (``_overlong.refuse_overlong``: the same count the server runs before a slot).
        Generating models only (an embedding model is refused by ``_request``)."""
        if self._loop is None:
            return
        refuse_overlong(
            text,
            self.context_length,
            lambda piece: len(self.tokenize(piece, add_bos=False, special=special)),
        )

    def stream_chat(self, call: ChatCall, cancel: threading.Event | None = None) -> Iterator[Delta]:
        """Stream the assistant's answer to ``call``: thinking, text and its tool calls.

        Messages' ``images`` go where their MEDIA_MARKERs are (see ``Message``). Raises
        VisionUnsupported when there are images and no projector, ImageRejected when an
        image is not one this engine can decode (both 400s). With tools offered, the
        model family's call markup is parsed here (``toolcalls.gate_calls``): held back
        from the text, the calls on the final delta.
        """
        prompt, tokens, media = self._chat_prompt(call, bounded=True)
        params = call.params
        stops = tuple(dict.fromkeys((*params.stop, *self.template().stop_strings())))
        starts_thinking = prompt.rstrip().endswith(ThinkSplitter.OPEN)
        splitter = ThinkSplitter(enabled=self._reasoning, start_in_reasoning=starts_thinking)
        yield from gate_calls(
            self._stream(
                tokens, params, cancel, stops, splitter, media=media, progress=call.progress
            ),
            call,
        )

    def chat_tokens(self, call: ChatCall) -> tuple[list[int], dict[int, ImageTokens]]:
        """The prompt tokens of a chat call (each image a run of negative placeholder
        ids, one per KV position, so ``len`` counts the image's tokens) and its images by
        run start; raises VisionUnsupported / ImageRejected as ``stream_chat``."""
        _, tokens, media = self._chat_prompt(call)
        return tokens, media

    def count_chat_tokens(self, call: ChatCall) -> int:
        """The ``usage.prompt_tokens`` a chat call would report, images' tokens included
        (their pictures are decoded and resized, not encoded)."""
        tokens, media = self.chat_tokens(call)
        return len(tokens) + sum(piece.n_tokens - piece.n_pos for piece in media.values())

    def _chat_prompt(
        self, call: ChatCall, *, bounded: bool = False
    ) -> tuple[str, list[int], dict[int, ImageTokens]]:
        """The rendered prompt, its tokens and images; ``bounded``: a prompt far over the
        context is refused before it is tokenized whole (``_refuse_overlong``)."""
        messages = call.messages
        if not any(m.images for m in messages):
            prompt = self.render(call)
            if bounded:
                self._refuse_overlong(prompt, special=True)
            return prompt, self.prompt_tokens(prompt), {}
        if self._projector is None:
            raise VisionUnsupported(self.model_id)
        marked, images = self._projector.prompt_with_markers(messages)
        prompt = self._render(marked, call)
        template = self.template()
        has_bos = bool(template.bos_token and prompt.startswith(template.bos_token))
        result = self._projector.tokenize(prompt, images, add_bos=not has_bos)
        if not result.tokens or result.tokens[-1] < 0:
            raise InvalidRequest(
                "the prompt cannot end with an image; the chat template must put text after it",
                param="messages",
            )
        return prompt, result.tokens, result.media

    def stream_completion(
        self, prompt: str, params: GenerationParams, cancel: threading.Event | None = None
    ) -> Iterator[Delta]:
        """Stream a plain-text continuation of ``prompt`` (no chat template); one far over
        the context is refused before it is tokenized whole (ContextOverflow)."""
        self._refuse_overlong(prompt, special=False)
        tokens = self.tokenize(prompt, add_bos=True, special=False)
        yield from self._stream(tokens, params, cancel, params.stop, ThinkSplitter(enabled=False))

    def fim_tokens(self) -> tuple[int, int, int] | None:
        """The model's fill-in-the-middle prefix/suffix/middle token ids, if it has them."""
        vocab = self._vocab
        ids = (
            int(llama_cpp.llama_vocab_fim_pre(vocab)),
            int(llama_cpp.llama_vocab_fim_suf(vocab)),
            int(llama_cpp.llama_vocab_fim_mid(vocab)),
        )
        return None if min(ids) < 0 else ids

    def infill_tokens(self, prefix: str, suffix: str) -> list[int]:
        """``[BOS] FIM_PRE prefix FIM_SUF suffix FIM_MID``, as llama.cpp's own server builds it."""
        fim = self.fim_tokens()
        if fim is None:
            raise InvalidRequest(
                f"{self.model_id} has no fill-in-the-middle tokens, so suffix cannot be "
                "used; send the prompt alone or pick a code model with FIM support",
                param="suffix",
            )
        pre, suf, mid = fim
        vocab = self._vocab
        bos = int(llama_cpp.llama_vocab_bos(vocab))
        head = [bos] if llama_cpp.llama_vocab_get_add_bos(vocab) and bos >= 0 else []
        return [
            *head,
            pre,
            *self.tokenize(prefix, add_bos=False, special=False),
            suf,
            *self.tokenize(suffix, add_bos=False, special=False),
            mid,
        ]

    def stream_infill(
        self,
        prefix: str,
        suffix: str,
        params: GenerationParams,
        cancel: threading.Event | None = None,
    ) -> Iterator[Delta]:
        """Stream the text that belongs between ``prefix`` and ``suffix`` (code models)."""
        tokens = self.infill_tokens(prefix, suffix)
        yield from self._stream(tokens, params, cancel, params.stop, ThinkSplitter(enabled=False))

    def _request(
        self,
        tokens: list[int],
        params: GenerationParams,
        cancel: threading.Event,
        media: Mapping[int, ImageTokens] | None = None,
    ) -> Request:
        """Check the request and build it with its sampler (the caller closes the sampler
        unless the decode loop took the request); raises every refusal of a request."""
        if self._loop is None:
            raise InvalidRequest(f"{self.model_id} is an embedding model; it cannot generate")
        if not tokens:
            raise InvalidRequest(
                "the prompt is empty; send at least one token of text", param="prompt"
            )
        n_ctx = self.context_length
        extra = sum(piece.n_tokens - piece.n_pos for piece in (media or {}).values())
        if len(tokens) + extra >= n_ctx:
            size = len(tokens) + extra
            raise ContextOverflow(
                f"the prompt is {size} tokens but the model's context is {n_ctx}; "
                "shorten the conversation or load the model with a larger context",
                prompt_tokens=size,
                n_ctx=n_ctx,
                kind="prompt_too_long",
                params=prompt_size_params(size, n_ctx),
            )
        if params.max_tokens is not None and params.max_tokens < 1:
            raise InvalidRequest("max_tokens must be at least 1", param="max_tokens")
        sampler = SamplerChain(self._vocab, self._n_vocab, params)
        request = Request(
            tokens=tokens,
            sampler=sampler,
            max_tokens=params.max_tokens if params.max_tokens is not None else n_ctx,
            deadline=(
                time.perf_counter() + params.timeout_s if params.timeout_s is not None else math.inf
            ),
            cancel=cancel,
            logprobs=params.logprobs,
            media=dict(media or {}),
            extra_cells=extra,
        )
        return request

    def _stream(
        self,
        tokens: list[int],
        params: GenerationParams,
        cancel: threading.Event | None,
        stops: Sequence[str],
        splitter: ThinkSplitter,
        *,
        media: Mapping[int, ImageTokens] | None = None,
        progress: bool = False,
    ) -> Iterator[Delta]:
        cancel = cancel or _NEVER
        started = time.perf_counter()
        request = self._request(tokens, params, cancel, media)
        request.progress = progress
        loop = self._loop
        assert loop is not None  # _request refused an embedding model
        try:
            # Every refusal is behind us: the caller may answer now (the prompt's
            # images and tokens may take minutes to read).
            yield ADMITTED
            if media and self._projector is not None:
                # The image encoder runs before the request joins the loop, which keeps
                # generating the other requests' tokens meanwhile (at a lower CPU
                # priority when there are any, so their speed holds). A picture whose
                # cells a slot or a saved conversation still holds is not encoded: if
                # the hint turns out stale, the loop encodes it.
                busy = loop.stats().slots_busy > 0
                held = loop.reusable_prefix(tokens)
                for start, piece in media.items():
                    if cancel.is_set():
                        break  # the client left after the headers: the loop drops it
                    if start + piece.n_pos > held:
                        self._projector.encode(piece, background=busy)
            loop.submit(request)
        except BaseException:  # the loop never took it (closed early, or a fault)
            request.sampler.close()
            raise
        # An M-RoPE image has more tokens than positions: usage counts its tokens.
        yield from read_answer(
            request,
            len(tokens) + request.extra_cells,
            self._piece,
            cancel,
            stops,
            splitter,
            started=started,
            placement=self.placement,
        )

    # ------------------------------------------------------------------ embeddings
    def embed_counted(
        self, texts: Sequence[str | list[int]], cancel: threading.Event | None = None
    ) -> tuple[list[list[float]], int | None]:
        """``embed``, and the tokens of ``texts`` as ``tokenize(text, add_bos=True,
        special=False)`` counts them: read once, so a caller needs no second call."""
        return self._embed(texts, cancel)

    def embed(
        self, texts: Sequence[str | list[int]], cancel: threading.Event | None = None
    ) -> list[list[float]]:
        """Unit-length vectors for ``texts``; long texts are windowed and pooled, not cut.
        A list of token ids is embedded as given (InvalidRequest for one outside the
        vocabulary), not turned into text and back.

        ``cancel`` set stops the work between decodes (raises Cancelled).
        """
        return self._embed(texts, cancel)[0]

    def _embed(
        self, texts: Sequence[str | list[int]], cancel: threading.Event | None
    ) -> tuple[list[list[float]], int]:
        if self._embedder is None:
            raise InvalidRequest(f"{self.model_id} is not loaded as an embedding model")
        window = self._embed_window()
        sequences: list[list[int]] = []
        plan: list[list[int]] = []  # per input: indexes of its windows in ``sequences``
        counted = 0
        for text in texts:
            if isinstance(text, str):
                tokens = self.tokenize(text, add_bos=True, special=False)
            else:
                self._check_ids(text, "input")
                tokens = list(text)
            counted += len(tokens)
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
        vectors = self._embedder.run(sequences, self.embedding_dim(), cancel)
        pooled = [pool([vectors[i] for i in idx], [len(sequences[i]) for i in idx]) for idx in plan]
        return pooled, counted

    def _embed_window(self) -> int:
        """Tokens one embedding decode may hold for a sequence: never past the trained
        context (positions beyond it abort llama.cpp; the load caps it too)."""
        window = min(self.context_length, int(llama_cpp.llama_n_batch(self._ctx)))
        trained = int(llama_cpp.llama_model_n_ctx_train(self._model.model))
        return min(window, trained) if trained > 0 else window

    def _split_specials(self, tokens: list[int]) -> tuple[list[int], list[int], list[int]]:
        model = self._model
        starts = {model.token_bos(), model.token_cls()} - {-1}
        ends = {model.token_eos(), model.token_sep()} - {-1}
        head = tokens[:1] if tokens and tokens[0] in starts else []
        tail = tokens[-1:] if len(tokens) > len(head) and tokens[-1] in ends else []
        return head, tokens[len(head) : len(tokens) - len(tail)], tail

    def rerank(
        self, query: str, documents: Sequence[str], cancel: threading.Event | None = None
    ) -> list[float]:
        """Relevance of each document to ``query`` from a rank-pooling model (higher = better).

        Pairs are laid out as llama.cpp's server does: ``[BOS] query [EOS] [SEP] doc [EOS]``
        (for XLM-R rerankers such as bge-reranker-v2-m3 that is ``<s> q </s></s> d </s>``).
        A document longer than the window is cut to fit, keeping the whole query; a
        reranker only orders candidates, and the caller still has every full text.
        """
        if self._embedder is None or int(llama_cpp.llama_pooling_type(self._ctx)) != RANK_POOLING:
            raise InvalidRequest(f"{self.model_id} is not a reranking model (no rank pooling)")
        model = self._model
        sep, eos = model.token_sep(), model.token_eos()
        close = [eos] if eos != -1 else [sep] if sep != -1 else []
        head = self.tokenize(query, add_bos=True, special=False)
        head += [sep] if sep != -1 else []
        window = self._embed_window()
        room = window - len(head) - len(close)
        if room < 1:
            raise ContextOverflow(
                f"the query is {len(head)} tokens; the reranker's window is {window}",
                prompt_tokens=len(head),
                n_ctx=window,
            )
        sequences = [
            head + self.tokenize(doc, add_bos=False, special=False)[:room] + close
            for doc in documents
        ]
        return [vector[0] for vector in self._embedder.run(sequences, 1, cancel)]

    def close(self) -> None:
        """Stop the decode loop and free the model's memory now, not at garbage collection."""
        if self._loop is not None:
            self._loop.stop()
            try:
                self._loop.persist()
            finally:
                self._loop = None
        if self._embedder is not None:
            self._embedder.stop()
            self._embedder = None
        self._free()

    def _free(self) -> None:
        if self._projector is not None:
            self._projector.close()
            self._projector = None
        if self._ctx is not None:
            llama_cpp.llama_free(self._ctx)
            self._ctx = None
        self._model.close()  # type: ignore[no-untyped-call]  # unannotated upstream


def _state_folder(path: Path, options: LoadOptions, n_swa: int = 0) -> Path | None:
    """This model's folder of saved conversations: one per file, KV cache type and
    sliding-window layout, so a state is only ever restored into a context of the
    layout that wrote it."""
    if options.prompt_cache_dir is None or options.prompt_cache_disk_bytes <= 0:
        return None
    try:
        stat = path.stat()
    except OSError:
        return None
    # The file's own bytes: a name that is not UTF-8 (possible on Linux) must hash too.
    identity = os.fsencode(path.resolve()) + (
        f"|{stat.st_size}|{stat.st_mtime_ns}|{options.cache_type}".encode()
    )
    if n_swa > 0 and not options.swa_full:  # window-sized SWA layers save only the window
        identity += b"|swa-window"
    if options.projector is not None:  # saved images were encoded by this projector
        identity += b"|" + os.fsencode(options.projector.resolve())
    return options.prompt_cache_dir / hashlib.sha256(identity).hexdigest()[:24]


def _tools_system_turn(
    tools: Sequence[dict[str, Any]],  # OpenAI tool entries (ToolSpec.openai)
    messages: Sequence[Message],
) -> list[Message]:
    """Messages with the tool list (and the <tool_call> reply format) in the system turn."""
    listing = "\n".join(json.dumps(t, ensure_ascii=False) for t in tools)
    text = (
        "You may call these tools:\n" + listing + "\nTo call one, reply with "
        '<tool_call>{"name": NAME, "arguments": {...}}</tool_call>.'
    )
    if messages and messages[0].role == "system":
        first = messages[0]
        return [replace(first, content=f"{first.content}\n\n{text}"), *messages[1:]]
    return [Message("system", text), *messages]
