"""Download throughput against the fake Hub on loopback: EdgeDesk's downloader vs curl.

Not part of the test run (pytest only collects ``test_*.py``). Run it with
``.venv/bin/python -m tests.benchmarks.bench_download [MB] [rounds]``; it serves one
random file from the fake Hub and fetches it alternately with our ``Downloader`` (Range,
streaming SHA-256, fsync, atomic rename) and with ``curl -L -o`` into the same folder.
The fake Hub runs in its own process so neither client shares a GIL with the server.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from desktop.base.net import NetGate
from desktop.catalog._download import Downloader
from desktop.catalog._hub import HubClient

REPO, NAME = "bench/payload-GGUF", "payload-Q8_0.gguf"
_SERVER = """
import os, sys
from tests.fixtures.fake_hub import FakeHub
with FakeHub() as hub:
    hub.add_repo(REPO, {NAME: os.urandom(int(sys.argv[1]) * 1024 * 1024)})
    print(hub.url, flush=True)
    sys.stdin.read()
""".replace("REPO", repr(REPO)).replace("NAME", repr(NAME))


def main() -> None:
    """Print MB/s for both clients over a few rounds."""
    size_mb = int(sys.argv[1]) if len(sys.argv) > 1 else 256
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    ours, curls = [], []
    root_dir = Path(__file__).resolve().parents[2]
    server = subprocess.Popen(
        [sys.executable, "-c", _SERVER, str(size_mb)],
        cwd=root_dir,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None and server.stdin is not None
    url = server.stdout.readline().strip()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            gate = NetGate(root / "net.jsonl")
            [remote] = HubClient(gate, url, token_source=lambda: None).files(REPO, [NAME])
            for _ in range(rounds):
                out = root / "ours"
                shutil.rmtree(out, ignore_errors=True)
                dl = Downloader(gate, quarantine_dir=root / "q", lock_dir=root / "locks")
                started = time.perf_counter()
                dl.pull([remote], out)
                ours.append(remote.size / (time.perf_counter() - started) / 1e6)
                target = root / "curl.bin"
                started = time.perf_counter()
                subprocess.run(["curl", "-sSL", "-o", str(target), remote.url], check=True)
                curls.append(remote.size / (time.perf_counter() - started) / 1e6)
                target.unlink()
    finally:
        server.stdin.close()
        server.wait(30)
    print(f"file: {size_mb} MiB over loopback, {rounds} rounds (median, best)")
    print(
        f"edgedesk Downloader : {statistics.median(ours):7.0f} MB/s  (best {max(ours):.0f})"
        "  incl. SHA-256 + fsync"
    )
    print(f"curl -L -o          : {statistics.median(curls):7.0f} MB/s  (best {max(curls):.0f})")


if __name__ == "__main__":
    main()
