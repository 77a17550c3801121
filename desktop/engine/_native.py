"""llama.cpp's native objects for one model: load options, model, context, warm-up.

Kept apart from the engine so the defaults (threads, batch sizes, KV layout) are in
one place, with the reasons for them.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from desktop.base.defaults import DEFAULT_PARALLEL, DEFAULT_STATE_CACHE_BYTES, physical_cores
from desktop.base.errors import ModelLoadError
from desktop.engine._llama_cpp import LlamaModel, llama_cpp, llama_cpp_logger, set_verbose
from desktop.engine._offload import ExpertOverrides

# llama-server's defaults: a logical batch of 2048 prompt tokens per decode, computed
# in micro-batches of 512.
DEFAULT_N_BATCH = 2048
DEFAULT_N_UBATCH = 512
T = TypeVar("T")  # what work on a passing thread returns


@functools.cache
def start_backends() -> None:
    """Register llama.cpp's backends (CPU, CUDA, Vulkan, Metal) once, without their lines.

    Starting a backend prints before EdgeDesk can say anything: a CUDA build on a machine
    without the driver, "ggml_cuda_init: failed to initialize CUDA: CUDA driver version
    is insufficient..." above EdgeDesk's own sentence with the fix; with a GPU, a device
    count and a line per device above ``edgedesk --version``. EdgeDesk says both in its
    words (``backend_info``'s notice, doctor's device list), so llama-cpp-python's log
    callback, which prints what its logger's level lets through, lets nothing through
    meanwhile. Every caller of llama.cpp's registry calls this first.
    """
    level = llama_cpp_logger.level
    llama_cpp_logger.setLevel(logging.CRITICAL + 1)  # above every level the callback maps to
    try:
        llama_cpp.llama_backend_init()
    finally:
        llama_cpp_logger.setLevel(level)


def gpu_offload_supported() -> bool:
    """Whether this llama.cpp build can put layers on a GPU (CUDA, Metal, Vulkan…)."""
    return bool(llama_cpp.llama_supports_gpu_offload())


# KV-cache element types by their llama.cpp names (ggml_type values).
CACHE_TYPES = {"f16": int(llama_cpp.GGML_TYPE_F16), "q8_0": int(llama_cpp.GGML_TYPE_Q8_0)}


@dataclass(frozen=True)
class LoadOptions:
    """How to load one model file; already fitted to the machine by the caller.

    ``context_length`` is the one KV cache a chat model's ``parallel`` slots share
    (unified, as llama-server's default): one request may use all of it, and requests
    running together share what is free. None means the engine's default: physical
    cores for threads, llama-server's 2048 / 512 for n_batch / n_ubatch.
    ``cache_type`` is the KV cache's element type (``CACHE_TYPES``); a quantized one
    needs flash attention, which llama.cpp then turns on.
    """

    context_length: int
    gpu_layers: int = 0
    threads: int | None = None
    embedding: bool = False
    state_cache_bytes: int = DEFAULT_STATE_CACHE_BYTES
    seed: int = 0
    parallel: int = DEFAULT_PARALLEL
    batch_threads: int | None = None
    n_batch: int | None = None
    n_ubatch: int | None = None
    cache_type: str = "f16"
    prompt_cache_dir: Path | None = None  # where conversations' KV caches outlive a load
    prompt_cache_disk_bytes: int = 0
    # Seals those files (AES-GCM) when set: derived from the encrypted database's key by
    # the composition root. Never printed (repr) with the options.
    prompt_cache_key: bytes | None = field(default=None, repr=False)
    lookup_draft: int = 0  # prompt-lookup tokens guessed per decode step; 0: off
    projector: Path | None = None  # mmproj GGUF: the model also reads images (_vision.py)
    # False: one stream of context_length cells per slot (llama-server --no-kv-unified):
    # four times the memory, but each slot's numbers never depend on its neighbours.
    kv_unified: bool = True
    # True: a sliding-window model's SWA layers keep every position, one full-size cache
    # per slot (several times the memory; engine.swa_full_cache); False, the default:
    # only the slots' windows, as llama-server, with a context checkpoint per slot.
    swa_full: bool = False
    # Mixture of experts: the routed experts of the first N layers stay in RAM whatever
    # ``gpu_layers`` offloads (llama-server's --n-cpu-moe N; 0: none).
    n_cpu_moe: int = 0


def load_context(path: Path, options: LoadOptions) -> tuple[LlamaModel, Any]:
    """The model and a llama context for ``options``; raises ModelLoadError, never crashes."""
    start_backends()
    set_verbose(False)
    model_params = llama_cpp.llama_model_default_params()
    model_params.n_gpu_layers = options.gpu_layers if gpu_offload_supported() else 0
    model_params.use_mmap = True
    overrides: ExpertOverrides | None = None
    if options.n_cpu_moe > 0:
        try:
            overrides = ExpertOverrides(options.n_cpu_moe)
        except (OSError, AttributeError) as exc:
            raise ModelLoadError(f"cannot keep {path.name}'s experts in RAM: {exc}") from None
        model_params.tensor_buft_overrides = overrides.pointer
    try:
        model = LlamaModel(path_model=str(path), params=model_params, verbose=False)
    except (ValueError, RuntimeError, OSError) as exc:
        raise ModelLoadError(f"llama.cpp could not load {path.name}: {exc}") from None
    # llama.cpp keeps the params' pointer to the overrides: they live as long as the model.
    vars(model)["edgedesk_overrides"] = overrides
    params = llama_cpp.llama_context_default_params()
    threads = options.threads or physical_cores()
    params.n_threads = threads
    params.n_threads_batch = options.batch_threads or threads
    if options.embedding:
        # Non-causal encoders need the whole input in one micro-batch. Never past the
        # trained context: an encoder's position table ends there, and a longer window
        # let a long input abort the process (GGML_ASSERT in get_rows); resolve/_plan.py caps it
        # too, this holds for any caller.
        trained = int(llama_cpp.llama_model_n_ctx_train(model.model))
        window = min(options.context_length, trained) if trained > 0 else options.context_length
        params.n_ctx = params.n_batch = params.n_ubatch = window
        params.n_seq_max = min(window, int(llama_cpp.llama_max_parallel_sequences()))
        params.kv_unified = True
        params.embeddings = True
        # Flash attention makes a sequence's vector depend on the other sequences packed
        # into the same decode (measured ~1e-3 on the tiny BERT); without it, a text's
        # vector and a document's rerank score are the same alone or batched.
        params.flash_attn_type = llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED
    else:
        parallel = max(1, options.parallel)
        # A sliding-window model's SWA layers keep only their window (llama-server's
        # default; Gemma 3 270M, 4 slots of a shared 32K: 134 MiB of KV cache instead of
        # 2.3 GiB, one full cache per slot); the decode loop keeps a "context
        # checkpoint" of that window at each long prompt's end, so the next turn still
        # reuses the prompt (checkpoints.SlotWindows.capture). With ``swa_full`` they keep
        # every position, and then one cache per slot: in a unified cache llama.cpp lets
        # one sequence's decode take the cells another holds outside its window, and
        # that chat's next turn must re-read its whole prefix (interleaved chats'
        # follow-ups: 0.06 s -> 2.5 s on Gemma 3).
        swa = int(llama_cpp.llama_model_n_swa(model.model)) > 0
        unified = options.kv_unified and not (swa and options.swa_full)
        params.n_ctx = options.context_length * (1 if unified else parallel)
        params.n_seq_max = parallel
        params.n_batch = options.n_batch or DEFAULT_N_BATCH
        params.n_ubatch = min(options.n_ubatch or DEFAULT_N_UBATCH, params.n_batch)
        # One pool of cells for every slot (llama-server's default): one long request
        # may use the whole context while shorter ones share what is free; the decode
        # loop keeps the slots' sum within it (see DecodeLoop._room).
        params.kv_unified = unified
        if options.cache_type not in CACHE_TYPES:
            raise ModelLoadError(
                f"unknown KV cache type {options.cache_type!r}; use one of {', '.join(CACHE_TYPES)}"
            )
        params.type_k = params.type_v = CACHE_TYPES[options.cache_type]
        if model_params.n_gpu_layers == 0:
            # On the CPU, flash attention explicitly: with "auto" and a unified cache,
            # greedy output depended on which requests ran beside it (2 of 4 runs of
            # tests/engine/batching/test_slots.py); with it on, never (the CPU backend has it).
            params.flash_attn_type = llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED
        params.swa_full = options.swa_full
    ctx = llama_cpp.llama_init_from_model(model.model, params)
    if not ctx:
        model.close()  # type: ignore[no-untyped-call]  # llama-cpp-python leaves it unannotated
        raise ModelLoadError(
            f"llama.cpp could not load {path.name}: no memory for a context of "
            f"{params.n_ctx} tokens (KV cache {options.cache_type}); lower the context"
        )
    return model, ctx


class BatchWorker:
    """A thread that owns one ``llama_batch`` and makes a context's decodes.

    The generation loop and the embedding loop share this lifetime: the subclass's
    ``_lock`` guards ``_stopping`` and wakes its worker; ``stop`` may be called from any
    thread (once the worker may end), and frees the batch only after the worker ended.
    """

    def __init__(self, n_batch: int, name: str, work: Callable[[], None]) -> None:
        self._batch = llama_cpp.llama_batch_init(n_batch, 0, 1)
        self._lock = threading.Condition()
        self._stopping = False
        self._thread = threading.Thread(target=work, name=name, daemon=True)

    def _start_worker(self) -> None:
        """Start the worker, once the subclass has set up everything it reads."""
        self._thread.start()

    def stop(self) -> None:
        """End the worker (what each loop does with unfinished work is its own), free the batch."""
        with self._lock:
            self._stopping = True
            self._lock.notify_all()
        self._thread.join()
        if self._batch is not None:  # a second stop must not free it twice
            llama_cpp.llama_batch_free(self._batch)
            self._batch = None


def warm_up(ctx: Any, vocab: Any, name: str) -> None:
    """One real decode now, as llama-server does, so a lack of memory fails the load.

    It runs on a thread of its own that ends with it (``on_a_passing_thread``): the
    thread that decodes first keeps an OpenMP pool for as long as it lives, and a second
    pool in the process (the decode loop's) makes libgomp cut every spin at ggml's
    per-operation barriers to 100 while it manages more threads than there are cores, so
    every token then waits for futex wake-ups (Moonlight-16B-A3B shape, 2 Zen 4 cores:
    64 against 78-80 ms a token; docs/benchmarks.md, "Session 17").
    """
    bos = int(llama_cpp.llama_vocab_bos(vocab))
    token = bos if bos >= 0 else 0

    def decode() -> int:
        batch = llama_cpp.llama_batch_init(1, 0, 1)
        try:
            batch.n_tokens = 1
            batch.token[0] = token
            batch.pos[0] = 0
            batch.n_seq_id[0] = 1
            batch.seq_id[0][0] = 0
            batch.logits[0] = 1
            return int(llama_cpp.llama_decode(ctx, batch))
        finally:
            llama_cpp.llama_batch_free(batch)

    code = on_a_passing_thread(decode, "edgedesk-warm-up")
    memory = llama_cpp.llama_get_memory(ctx)
    if memory is not None:
        llama_cpp.llama_memory_clear(memory, True)
    if code != 0:
        raise ModelLoadError(
            f"llama.cpp could not run {name} (decode code {code}); there may not be enough memory"
        )


def on_a_passing_thread(work: Callable[[], T], name: str) -> T:
    """``work()`` on a new thread that ends with it: its result, or its exception raised here.

    For llama.cpp work outside the one thread that computes for an engine (its decode
    loop): libgomp keeps a pool of worker threads for each thread that has run a parallel
    region, until that thread ends, and while it manages more threads than the process
    may use cores it cuts its spin to 100 before sleeping (see ``warm_up``). A thread
    that ends takes its pool with it.
    """
    done: list[T] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            done.append(work())
        except BaseException as exc:  # handed to the caller as is
            failed.append(exc)

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    thread.join()
    if failed:
        raise failed[0]
    return done[0]
