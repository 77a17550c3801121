"""Remote-engine fixtures: an in-memory OS keyring, a fake remote, a local server using it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import keyring
import openai
import pytest
from keyring.backend import KeyringBackend

from desktop.base.config import ServerSettings
from desktop.remote import keyring_set
from desktop.root.context import AppContext
from desktop.server._runner import ServerRunner
from tests.benchmarks.llama_server_peer import Choice, candidates, choose
from tests.remote.fake_openai import Fake, fake_server


class MemoryKeyring(KeyringBackend):
    """A keyring that lives in this process only (no OS keyring is touched by tests)."""

    priority = 1

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.store: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.store.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.store[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.store.pop((service, username), None)


@pytest.fixture(autouse=True)
def memory_keyring() -> Iterator[MemoryKeyring]:
    """Every remote test gets an empty, private keyring."""
    previous = keyring.get_keyring()
    ring = MemoryKeyring()
    keyring.set_keyring(ring)
    try:
        yield ring
    finally:
        keyring.set_keyring(previous)


@pytest.fixture(scope="module")
def fake() -> Iterator[Fake]:
    """A fake OpenAI-compatible remote that wants the key ``sk-remote``."""
    with fake_server(key="sk-remote") as server:
        yield server


@dataclass
class Local:
    """The local EdgeDesk server whose remote ``gpu`` is the fake."""

    ctx: AppContext
    client: openai.OpenAI
    runner: ServerRunner

    @property
    def root(self) -> str:
        """The server's address without ``/v1`` (Anthropic and Ollama clients want it)."""
        return str(self.client.base_url).rstrip("/").removesuffix("/v1")


@pytest.fixture
def local(fake: Fake, context: AppContext) -> Iterator[Local]:
    """A local server (no key) with the fake added as remote ``gpu``."""
    context.remote_registry.add("gpu", fake.url)
    keyring_set("gpu", "sk-remote")
    runner = context.new_api_server(
        settings=ServerSettings(require_key=False).model_copy(update={"port": 0})
    )
    runner.start()
    try:
        with openai.OpenAI(
            base_url=runner.url, api_key="unused", max_retries=0, timeout=60
        ) as client:
            yield Local(context, client, runner)
    finally:
        runner.stop()


@pytest.fixture(scope="session")
def llama_server_for(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Path], Choice]:
    """For a GGUF, the first llama-server that serves that very file on this CPU.

    Each candidate is probed with the model the test then runs, once per model and
    session: a binary that answers on a tiny F32 file can still die with SIGILL on a
    Q4_K_M one (tests/benchmarks/llama_server_peer.py). One that dies is passed over with
    its reason.
    """
    chosen: dict[Path, Choice] = {}

    def for_model(model: Path) -> Choice:
        if model not in chosen:
            work = tmp_path_factory.mktemp("llama-server-probe")
            chosen[model] = choose(candidates(), model, work)
        return chosen[model]

    return for_model
