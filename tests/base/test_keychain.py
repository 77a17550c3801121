"""desktop.base.keychain: secrets round-trip through the keyring and never fall back to a file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest

from desktop.base.errors import ConfigError
from desktop.base.keychain import Keychain
from tests.fixtures.file_keyring import ENV, FileKeyring

pytestmark = pytest.mark.fast


@pytest.fixture
def file_keyring(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A keyring in a JSON file for this test only."""
    path = tmp_path / "keyring.json"
    monkeypatch.setenv(ENV, str(path))
    previous = keyring.get_keyring()
    keyring.set_keyring(FileKeyring())
    yield path
    keyring.set_keyring(previous)


def test_a_stored_secret_is_read_back_and_forgotten(file_keyring: Path) -> None:
    chain = Keychain("EdgeDesk test", "token")
    assert chain.get("github") is None
    chain.set("github", "s3cret")
    assert chain.get("github") == "s3cret"
    assert chain.delete("github") is True
    assert chain.get("github") is None
    assert chain.delete("github") is False


def test_two_kinds_of_secret_do_not_see_each_other(file_keyring: Path) -> None:
    Keychain("EdgeDesk remote engine", "API key").set("work", "key-1")
    assert Keychain("EdgeDesk MCP server", "token").get("work") is None


def test_without_a_keyring_nothing_is_stored_and_the_refusal_says_why(tmp_path: Path) -> None:
    # tests/conftest.py selects the "fail" backend: no usable keyring, as on a bare server.
    chain = Keychain("EdgeDesk test", "API key")
    assert chain.get("work") is None
    with pytest.raises(
        ConfigError,
        match="no usable OS keyring to store the API key in.*"
        "never written to a file, so remotes need one",
    ):
        chain.set("work", "key-1", why_needed="remotes need one")
    assert chain.delete("work") is False
    assert not any(tmp_path.iterdir())


def test_a_keyring_backend_that_cannot_load_is_no_keyring(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # PYTHON_KEYRING_BACKEND naming a module that is not installed: every use of the
    # keyring reads "nothing stored" and storing is refused with the usual message.
    import keyring.core

    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyrings.not_installed.Backend")
    monkeypatch.setattr(keyring.core, "_keyring_backend", None)
    with pytest.raises(ModuleNotFoundError):
        keyring.get_keyring()  # what reached the user as "unexpected error" before
    chain = Keychain("EdgeDesk test", "token")
    assert chain.get("github") is None
    assert chain.usable() is False
    assert chain.delete("github") is False
    with pytest.raises(ConfigError, match="no usable OS keyring"):
        chain.set("github", "s3cret")
