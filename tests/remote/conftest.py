"""Remote-engine fixtures: an in-memory OS keyring, a fake remote, a context using it."""

from __future__ import annotations

from collections.abc import Iterator

import keyring
import pytest
from keyring.backend import KeyringBackend

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
