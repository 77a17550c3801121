"""Fixtures for the installer tests: packaging/build.py loaded by path, a throwaway GPG key.

packaging/ is deliberately not a Python package (it would shadow PyPI's ``packaging``),
so build.py is loaded with importlib from its file.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def need(*tools: str) -> None:
    """Skip (with the reason) only when a tool is genuinely not installed."""
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)} (.ci/run installs them with apt-get)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The freeze tests take minutes: they run only when asked for with -m packaging."""
    if "packaging" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="freezes the app (minutes); run: pytest -m packaging")
    for item in items:
        if item.get_closest_marker("packaging") is not None:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def build() -> ModuleType:
    """packaging/build.py as a module."""
    spec = importlib.util.spec_from_file_location("edgedesk_build", ROOT / "packaging" / "build.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def gpg_key() -> Iterator[tuple[str, dict[str, str]]]:
    """A passphrase-less RSA signing key in a throwaway GNUPGHOME: (key id, environment)."""
    need("gpg", "gpgconf")
    # gpg-agent's socket path must stay short, so not under pytest's deep tmp folders.
    home = tempfile.mkdtemp(prefix="edgedesk-gpg-", dir="/tmp")
    env = {**os.environ, "GNUPGHOME": home}
    # debsigs would otherwise sign with SHA-1, which debsig-verify's gpg rejects.
    Path(home, "gpg.conf").write_text(
        "personal-digest-preferences SHA512 SHA256\ndigest-algo SHA512\n"
    )
    subprocess.run(
        [
            "gpg",
            "--batch",
            "--pinentry-mode",
            "loopback",
            "--passphrase",
            "",
            "--quick-gen-key",
            "EdgeDesk Test Release <release@edgedesk.invalid>",
            "rsa2048",
            "sign",
            "1d",
        ],
        env=env,
        check=True,
        capture_output=True,
    )
    listing = subprocess.run(
        ["gpg", "--batch", "--with-colons", "--list-secret-keys"],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    keyid = next(line.split(":")[4] for line in listing.splitlines() if line.startswith("sec"))
    try:
        yield keyid, env
    finally:
        subprocess.run(["gpgconf", "--kill", "gpg-agent"], env=env, check=False)
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def stand_in_freeze(tmp_path: Path) -> Path:
    """A tiny tree shaped like the PyInstaller freeze, with the real llama.cpp library."""
    import llama_cpp

    tree = tmp_path / "freeze" / "edgedesk"
    lib = tree / "_internal" / "llama_cpp" / "lib"
    lib.mkdir(parents=True)
    exe = tree / "edgedesk"
    exe.write_text("#!/bin/sh\necho 'edgedesk stand-in'\n")
    exe.chmod(0o755)
    shutil.copy(Path(llama_cpp.__file__).parent / "lib" / "libggml-base.so", lib)
    return tree


def flip_byte(path: Path, offset: int) -> Path:
    """A copy of ``path`` with the byte at ``offset`` (negative: from the end) changed."""
    copy = path.with_name("tampered-" + path.name)
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF
    copy.write_bytes(bytes(data))
    return copy
