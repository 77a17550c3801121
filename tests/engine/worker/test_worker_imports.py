"""A model's worker process imports only what it needs (issue 47, memory).

Every module a Python process imports stays in its memory for good, and each loaded
model has a worker of its own. The worker is started exactly as the app starts it, with
``-X importtime``: Python then writes a line per module it really runs (a module
registered lazily and never touched gets none) to standard error, which is the
worker's log file.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from desktop.engine._types import ChatCall, GenerationParams, Message, ModelSpec
from desktop.engine._worker.start import start_worker, worker_command

# Never in a worker: the window's toolkit and the HTTP server.
NEVER = ("PySide6", "shiboken6", "uvicorn", "starlette", "fastapi", "httpx", "desktop.server")
# Imported by llama_cpp or the state cache, and needed only for what a worker rarely
# does: llama-cpp-python's disk cache (diskcache, sqlite3), a sealed prompt cache
# (cryptography).
LAZY = ("diskcache", "sqlite3", "_sqlite3", "cryptography")
# Needed only once a model loads.
FOR_THE_MODEL = ("llama_cpp", "numpy", "desktop.engine._loader", "desktop.engine._llama")


def _imported(log: str) -> set[str]:
    """The modules ``-X importtime`` says were run (its lines: ``import time: a | b | name``)."""
    names = set()
    for line in log.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "package":  # the header line
                names.add(name)
    return names


def _among(names: set[str], roots: Iterable[str]) -> list[str]:
    """The names in ``names`` that are one of ``roots`` or inside one of them."""
    return sorted(n for n in names if any(n == r or n.startswith(r + ".") for r in roots))


def _traced_command() -> list[str]:
    command = worker_command()
    return [command[0], "-X", "importtime", *command[1:]]


def test_a_started_worker_imports_no_engine_no_qt_and_no_server_before_its_model() -> None:
    # The app gone before its first message: the worker ends, having imported only
    # what it needs to read that message.
    done = subprocess.run(
        _traced_command(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        check=False,
    )
    log = done.stderr.decode(errors="replace")
    names = _imported(log)
    assert "desktop.engine._worker.child" in names, log[-2000:]
    assert _among(names, NEVER) == []
    assert _among(names, LAZY) == []
    assert _among(names, FOR_THE_MODEL) == []


def _serve_once(tiny_chat: Path, log_path: Path, key: bytes | None = None) -> set[str]:
    """Start a traced worker on the tiny model, stream one answer, close it; what it ran."""
    engine = start_worker(
        ModelSpec(tiny_chat, "tiny", context_length=512),
        log_path=log_path,
        command=_traced_command(),
        prompt_cache_key=key,
    )
    try:
        chunks = list(
            engine.stream_chat(ChatCall.of([Message("user", "hi")], GenerationParams(max_tokens=4)))
        )
        assert chunks[-1].usage is not None  # it answered
    finally:
        engine.close()
    return _imported(log_path.read_text(errors="replace"))


def test_a_worker_serving_a_model_runs_none_of_the_lazy_modules(
    tiny_chat: Path, tmp_path: Path
) -> None:
    names = _serve_once(tiny_chat, tmp_path / "worker.log")
    # The model really loaded in this process and answered...
    assert _among(names, ("llama_cpp", "numpy")) != []
    # ...and llama_cpp's disk cache, sqlite3, cryptography, Qt and the server never ran.
    assert _among(names, NEVER) == []
    assert _among(names, LAZY) == []


def test_a_sealed_prompt_cache_still_gets_cryptography_when_it_needs_it(
    tiny_chat: Path, tmp_path: Path
) -> None:
    names = _serve_once(tiny_chat, tmp_path / "worker.log", key=b"k" * 32)
    assert "cryptography.hazmat.primitives.ciphers.aead" in names
    assert _among(names, ("diskcache", "sqlite3")) == []


def test_a_deferred_module_still_works_when_used() -> None:
    # In a fresh interpreter: llama_cpp's own disk cache, the one user of diskcache.
    script = (
        "import sys\n"
        "from desktop.engine._worker.child import defer_unused_imports\n"
        "defer_unused_imports()\n"
        "import diskcache\n"
        "assert 'sqlite3' not in sys.modules\n"
        "import tempfile\n"
        "with tempfile.TemporaryDirectory() as d:\n"
        "    with diskcache.Cache(d) as cache:\n"
        "        cache['a'] = 1\n"
        "        assert cache['a'] == 1\n"
        "assert 'sqlite3' in sys.modules\n"
        "print('ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, timeout=60, check=False, text=True
    )
    assert done.stdout.strip() == "ok", done.stderr[-2000:]
