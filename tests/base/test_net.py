"""The network gate: offline mode, the connection log, and no library calling home."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from desktop.base.errors import NetworkBlocked
from desktop.base.net import NetGate, read_log
from tests.fixtures.fake_hub import FakeHub

ROOT = Path(__file__).resolve().parents[2]


def test_gate_logs_host_path_and_purpose_but_not_the_query(tmp_path):
    gate = NetGate(tmp_path / "net.jsonl", clock=lambda: 1234.5)
    gate.check("get", "https://cdn.example/file?X-Amz-Signature=secret", "download x")
    [entry] = gate.entries()
    assert (entry.time, entry.host, entry.method, entry.path, entry.purpose, entry.allowed) == (
        1234.5,
        "cdn.example",
        "GET",
        "/file",
        "download x",
        True,
    )
    assert "secret" not in gate.log_path.read_text()


def test_offline_refuses_and_records_the_refusal(tmp_path):
    gate = NetGate(tmp_path / "net.jsonl", offline=True)
    with pytest.raises(NetworkBlocked, match="offline mode"):
        gate.check("GET", "https://huggingface.co/api/models/x/y", "Hub metadata")
    [entry] = gate.entries()
    assert not entry.allowed and "offline" in entry.reason


def test_allow_downloads_false_blocks_downloads_only(tmp_path):
    gate = NetGate(tmp_path / "net.jsonl", allow_downloads=False)
    gate.check("GET", "https://huggingface.co/api/models/x/y", "Hub metadata")
    with pytest.raises(NetworkBlocked, match="allow_downloads"):
        gate.check("GET", "https://huggingface.co/x/y/resolve/main/f.gguf", "dl", download=True)


def test_log_survives_a_half_written_line(tmp_path):
    gate = NetGate(tmp_path / "net.jsonl")
    gate.check("GET", "http://127.0.0.1/a", "one")
    with gate.log_path.open("a") as handle:
        handle.write('{"time": 1, "host"')  # a crash mid-write
    assert [e.purpose for e in read_log(gate.log_path)] == ["one"]


def test_hook_sees_every_request_including_redirects(tmp_path, tiny_chat):
    with FakeHub() as hub:
        hub.add_repo("org/r", {"f.gguf": b"x" * 1000})
        gate = NetGate(tmp_path / "net.jsonl")
        with httpx.Client(
            event_hooks={"request": [gate.hook("test")]}, follow_redirects=True
        ) as client:
            assert client.get(f"{hub.url}/org/r/resolve/main/f.gguf").content == b"x" * 1000
        offline = NetGate(tmp_path / "off.jsonl", offline=True)
        with (
            httpx.Client(event_hooks={"request": [offline.hook("test")]}) as client,
            pytest.raises(NetworkBlocked),
        ):
            client.get(f"{hub.url}/org/r/resolve/main/f.gguf")
        assert len(hub.log) == 2  # the resolve and its CDN redirect; nothing while offline
    assert [e.path.split("/")[1] for e in gate.entries()] == ["org", "_cdn"]


_PROBE = """
import os, sys
from pathlib import Path
if sys.argv[1] == "edgedesk":
    from desktop.catalog._hub import HubClient
    from desktop.base.net import NetGate
    gate = NetGate(Path(sys.argv[2]))
    HubClient(gate, os.environ["HF_ENDPOINT"], token_source=lambda: None).commit("org/r")
else:
    from huggingface_hub import HfApi
    HfApi(endpoint=os.environ["HF_ENDPOINT"], token=False).model_info("org/r")
"""


@pytest.mark.parametrize("client", ["plain", "edgedesk"])
def test_no_unasked_agent_harnesses_call(client, tmp_path):
    """huggingface_hub 2.4 fetches /api/agent-harnesses on its first request; we must not."""
    quiet = {
        "HF_HUB_OFFLINE",
        "HF_HUB_DISABLE_TELEMETRY",
        "DO_NOT_TRACK",
        "DISABLE_TELEMETRY",
        "HF_HUB_DISABLE_UPDATE_CHECK",
        "HF_HUB_DISABLE_IMPLICIT_TOKEN",
    }
    with FakeHub() as hub:
        hub.add_repo("org/r", {"f.gguf": b"x"})
        env = {k: v for k, v in os.environ.items() if k not in quiet}
        env.update(HF_ENDPOINT=hub.url, HF_HOME=str(tmp_path / "hf"), PYTHONPATH=str(ROOT))
        subprocess.run(
            [sys.executable, "-c", _PROBE, client, str(tmp_path / "net.jsonl")],
            env=env,
            check=True,
            timeout=60,
            cwd=ROOT,
        )
        paths = [e.path for e in hub.log]
    assert "/api/models/org/r" in paths
    if client == "plain":  # the control: proves the fake Hub would have seen the call
        assert "/api/agent-harnesses" in paths
    else:
        assert "/api/agent-harnesses" not in paths
        assert [e.path for e in read_log(tmp_path / "net.jsonl")] == ["/api/models/org/r"]
