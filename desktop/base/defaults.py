"""Starting values and constants that more than one layer needs, each defined once.

The settings (``desktop.base.config``) offer them as defaults a user can change; the engine,
the scheduler and the server's wire limits fall back on the same numbers when built
without settings (tests, benchmarks, the CLI's probes). A number used by one module
only stays in that module.
"""

from __future__ import annotations

import psutil

DEFAULT_PARALLEL = 4  # slots per chat model, as llama-server's default
# RAM for conversations pushed out of the slots, where the machine is not known (a plan
# the resolver made sizes it with ``state_cache_bytes``: 512 MiB is its 16 GiB figure).
DEFAULT_STATE_CACHE_BYTES = 512 * 1024 * 1024
# The RAM state cache's share of the machine's memory, and its floor and cap: a model
# loaded on a 4 GiB machine does not grow 512 MiB of saved conversations into swap, and
# one on a 64 GiB machine keeps long agent sessions of a 9B model (~80 KiB a token).
STATE_CACHE_RAM_FRACTION = 1 / 32
STATE_CACHE_MIN_BYTES = 64 * 1024 * 1024
STATE_CACHE_MAX_BYTES = 2 * 1024 * 1024 * 1024
KEEP_ALIVE_S = 600.0  # an idle model stays loaded this long, then its memory is freed
MAX_LOADED_MODELS = 2  # models resident at once before the least recently used one goes
QUEUE_MAX = 16  # requests that may wait for a slot before the server answers 429
MAX_TOKENS_LIMIT = 8192  # most tokens one answer may generate; larger requests are lowered
GENERATION_TIMEOUT_S = 600.0  # one answer's wall-clock limit (local or remote)
# llama.cpp's LLAMA_POOLING_TYPE_RANK: a GGUF header's ``pooling_type`` that makes a
# cross-encoder reranker (resolve reads it from the header, the engine from llama.cpp).
RANK_POOLING = 4
# RAM a model's worker process holds besides llama.cpp's buffers (Python, llama_cpp and
# the libraries they load), counted in its fit; tests/benchmarks/bench_worker.py prints
# the measured figure ("worker base") to check it against.
WORKER_PROCESS_BYTES = 110 * 1024 * 1024


def state_cache_bytes(ram_total_bytes: int) -> int:
    """The RAM state cache's budget on a machine with ``ram_total_bytes`` of memory:
    ``STATE_CACHE_RAM_FRACTION`` of it, within the floor and the cap."""
    share = int(ram_total_bytes * STATE_CACHE_RAM_FRACTION)
    return max(STATE_CACHE_MIN_BYTES, min(STATE_CACHE_MAX_BYTES, share))


def physical_cores() -> int:
    """CPU cores without hyper-threading siblings, at least 1: llama.cpp's decode is
    memory-bound, so extra logical threads only contend (llama-server's default too)."""
    return max(1, psutil.cpu_count(logical=False) or psutil.cpu_count() or 1)


# The embedding model a document collection gets when neither it nor the settings name
# one (the composition root, the Documents screen and `edgedesk docs` all offer it).
DEFAULT_EMBEDDING_MODEL = "bge-small-en-v1.5"
