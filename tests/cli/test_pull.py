"""``edgedesk models pull|rm|import|search``, ``network log`` and ``auth login`` end to end."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import keyring
import pytest
from keyring.backend import KeyringBackend

from desktop.cli import main
from tests.conftest import wait_until
from tests.fixtures.fake_hub import GOOD_TOKEN, FakeHub, Fault

CAT_REPO = "THUDM/glm-edge-1.5b-chat-gguf"
CAT_FILE = "ggml-model-Q4_K_M.gguf"
REPO = "org/tiny-GGUF"
BIG = "tiny-big-Q8_0.gguf"
BIG_SIZE = 2 * 1024 * 1024


class MemoryKeyring(KeyringBackend):
    """A keyring that lives in this test only (never the developer's real one)."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.store: dict[tuple[str, str], str] = {}

    def get_password(self, service, username):
        return self.store.get((service, username))

    def set_password(self, service, username, password):
        self.store[(service, username)] = password

    def delete_password(self, service, username):
        self.store.pop((service, username))


@pytest.fixture(autouse=True)
def memory_keyring():
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


@pytest.fixture
def hub(hub: FakeHub, tiny_chat):
    """The shared fake Hub (tests/conftest.py) with a catalog model, a big file, a gated repo."""
    hub.add_repo(CAT_REPO, {CAT_FILE: tiny_chat.read_bytes()}, downloads=50)
    hub.add_repo(
        REPO, {BIG: os.urandom(BIG_SIZE), "tiny-Q4_K_M.gguf": b"GGUF" * 1000}, downloads=10
    )
    hub.add_repo("org/gated-GGUF", {"g-Q4_0.gguf": tiny_chat.read_bytes()}, gated=True)
    return hub


def test_pull_catalog_model_then_list_and_run(hub, tiny_chat, edgedesk_home, capsys):
    assert main(["models", "pull", "glm-edge-1.5b"]) == 0
    out = capsys.readouterr()
    assert "installed glm-edge-1.5b" in out.out and "SHA-256 verified" in out.out
    assert "100.0%" in out.err  # the progress line (non-TTY: periodic lines)
    target = edgedesk_home / "data" / "models" / CAT_REPO / CAT_FILE
    assert target.read_bytes() == tiny_chat.read_bytes()
    assert main(["models", "list", "--json"]) == 0
    rows = {r["id"]: r for r in json.loads(capsys.readouterr().out)["models"]}
    assert rows["glm-edge-1.5b"]["installed"] == [str(target)]
    assert main(["run", "glm-edge-1.5b", "hello", "--max-tokens", "3", "--seed", "1"]) == 0
    assert main(["network", "log"]) == 0
    log = capsys.readouterr().out
    assert "127.0.0.1/api/models/THUDM/glm-edge-1.5b-chat-gguf" in log and "download" in log


@pytest.mark.parametrize("how", ["flag", "env", "flag-after-verb"])
def test_offline_pull_fails_at_once_without_any_connection(hub, how, capsys, monkeypatch):
    argv = ["models", "pull", "glm-edge-1.5b"]
    if how == "flag":
        argv = ["--offline", *argv]
    elif how == "env":
        monkeypatch.setenv("EDGEDESK_OFFLINE", "1")
    else:
        argv = [*argv, "--offline"]
    assert main(argv) == 6
    assert "offline mode" in capsys.readouterr().err
    assert (
        main(
            [*argv[:-2], "search", "kimi"]
            if how != "flag-after-verb"
            else ["models", "search", "kimi", "--offline"]
        )
        == 6
    )
    assert hub.log == []


def test_gated_repo_needs_auth_login(hub, memory_keyring, edgedesk_home, capsys, monkeypatch):
    ref = "org/gated-GGUF:g-Q4_0.gguf"
    assert main(["models", "pull", ref]) == 8
    assert "edgedesk auth login" in capsys.readouterr().err
    monkeypatch.setattr(sys, "stdin", io.StringIO(GOOD_TOKEN + "\n"))
    assert main(["auth", "login", "--token-stdin"]) == 0
    assert memory_keyring.store == {("edgedesk", "huggingface"): GOOD_TOKEN}
    assert main(["models", "pull", ref]) == 0
    assert "installed g-Q4_0" in capsys.readouterr().out
    for path in edgedesk_home.rglob("*"):  # the token is never written to disk by us
        if path.is_file() and path.stat().st_size < 10_000_000:
            assert GOOD_TOKEN.encode() not in path.read_bytes(), path


def test_missing_file_names_repo_and_file(hub, capsys):
    assert main(["models", "pull", f"{REPO}:nope-Q4_0.gguf"]) == 3
    err = capsys.readouterr().err
    assert "nope-Q4_0.gguf" in err and REPO in err


def test_disk_full_reports_numbers(hub, capsys, monkeypatch):
    import shutil
    from collections import namedtuple

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage(10**12, 10**12, 5 * 10**6))
    assert main(["models", "pull", f"{REPO}:{BIG}"]) == 7
    assert "needs 2.1 MB (+268.4 MB headroom), only 5.0 MB is free" in capsys.readouterr().err
    assert hub.downloads() == []


def test_search_lists_quants_and_sizes(hub, capsys):
    assert main(["models", "search", "gguf"]) == 0
    out = capsys.readouterr().out
    assert out.index(CAT_REPO) < out.index(REPO)  # most downloaded first
    assert "Q8_0" in out and "2.1 MB" in out
    assert f"edgedesk models pull {REPO}:{BIG}" in out


def test_rm_and_import(hub, tiny_chat, edgedesk_home, capsys):
    assert main(["models", "pull", f"{REPO}:{BIG}"]) == 0
    target = edgedesk_home / "data" / "models" / REPO / BIG
    assert target.exists()
    assert main(["models", "rm", "tiny-big-Q8_0"]) == 0
    assert not target.exists()
    assert main(["models", "import", str(tiny_chat)]) == 0
    assert "imported tiny-chat" in capsys.readouterr().out
    assert main(["run", "tiny-chat", "hi", "--max-tokens", "2", "--seed", "1"]) == 0
    assert main(["models", "rm", "tiny-chat"]) == 0
    assert tiny_chat.exists()


def test_killed_pull_resumes_from_its_part(hub, edgedesk_home):
    """Kill -9 mid-transfer, pull again: only the missing bytes come over the wire."""
    hub.add_fault(REPO, BIG, Fault("throttle", bytes_per_s=400_000, times=1))
    env = {**os.environ, "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "desktop", "models", "pull", f"{REPO}:{BIG}"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    part = edgedesk_home / "data" / "models" / REPO / (BIG + ".part")

    def part_grown() -> bool:
        assert proc.poll() is None
        return part.exists() and part.stat().st_size > 300_000

    wait_until(part_grown, 30, "300,000 bytes in the part file")
    proc.kill()
    proc.wait(10)
    kept = part.stat().st_size
    assert 0 < kept < BIG_SIZE
    first_run = len(hub.downloads())
    assert main(["models", "pull", f"{REPO}:{BIG}"]) == 0
    second = hub.downloads()[first_run:]
    assert second[0].range == f"bytes={kept}-"
    assert sum(e.sent for e in second) == BIG_SIZE - kept
    assert (part.parent / BIG).read_bytes() == hub.repos[REPO].files[BIG]
    assert not part.exists()


def test_network_log_when_empty(capsys):
    assert main(["network", "log"]) == 0
    assert "no network connections recorded" in capsys.readouterr().out


def test_paths_stay_readable(hub, edgedesk_home):
    assert main(["models", "pull", "glm-edge-1.5b"]) == 0
    index = json.loads((edgedesk_home / "data" / "installed.json").read_text())
    [model] = index["models"]
    # <org>/<repo>/<file> under the models folder, stored relative so the folder can move.
    assert model["files"][0] == f"{CAT_REPO}/{CAT_FILE}"
    assert model["revision"] == hub.repos[CAT_REPO].commit and model["source"] == "hub"
