"""Downloads against a fake Hub on 127.0.0.1 that drops, stalls, throttles and lies."""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from collections import namedtuple
from pathlib import Path

import pytest

from desktop.base.errors import (
    AuthRequired,
    Cancelled,
    DownloadError,
    ModelNotFound,
    NetworkBlocked,
)
from desktop.base.net import NetGate
from desktop.catalog._download import Downloader, Progress
from desktop.catalog._entries import load_catalog
from desktop.catalog._hub import HubClient
from desktop.catalog._installed import InstalledIndex
from desktop.catalog._pull import parse_target, pull
from tests.conftest import wait_until
from tests.fixtures.fake_hub import GOOD_TOKEN, FakeHub, Fault, sha256

REPO = "org/tiny-GGUF"
BIG = "tiny-big-Q8_0.gguf"
BIG_SIZE = 2 * 1024 * 1024


@pytest.fixture
def payload(tiny_chat: Path) -> dict[str, bytes]:
    big = os.urandom(BIG_SIZE)
    return {"tiny-Q4_K_M.gguf": tiny_chat.read_bytes(), BIG: big, "README.md": b"# tiny\n"}


@pytest.fixture
def hub(hub: FakeHub, payload: dict[str, bytes]) -> FakeHub:
    """The shared fake Hub (tests/conftest.py) with the payload and a gated repo."""
    hub.add_repo(REPO, payload)
    hub.add_repo("org/gated-GGUF", {"g.gguf": payload["tiny-Q4_K_M.gguf"]}, gated=True)
    return hub


class Rig:
    """A gate, a Hub client and a downloader pointed at the fake Hub."""

    def __init__(
        self,
        hub: FakeHub,
        root: Path,
        *,
        token: str | None = None,
        offline: bool = False,
        **options: object,
    ) -> None:
        self.root = root
        self.gate = NetGate(root / "logs" / "network.jsonl", offline=offline)
        self.client = HubClient(
            self.gate, hub.url, token_source=lambda: token, sleep=lambda s: None
        )
        opts = {"stall_s": 0.5, "backoff_s": 0.01, "max_attempts": 5, **options}
        self.downloader = Downloader(
            self.gate,
            quarantine_dir=root / "quarantine",
            lock_dir=root / "locks",
            token=token,
            **opts,
        )
        self.models = root / "models"

    def fetch(self, name: str, repo: str = REPO, **kwargs: object):
        remote = self.client.files(repo, [name])
        return remote[0], self.downloader.pull(remote, self.models, **kwargs)[0]


def test_complete_download_is_verified_and_logged(hub, payload, tmp_path):
    rig = Rig(hub, tmp_path)
    seen: list[Progress] = []
    remote, fetched = rig.fetch(BIG, progress=seen.append)
    assert fetched.path == rig.models / REPO / BIG
    assert fetched.path.read_bytes() == payload[BIG]
    assert fetched.sha256 == remote.sha256 == sha256(payload[BIG])
    assert remote.revision == hub.repos[REPO].commit  # pinned to the commit, not "main"
    assert f"/resolve/{remote.revision}/" in remote.url
    assert not list(fetched.path.parent.glob("*.part"))
    assert seen[-1].done == seen[-1].total == BIG_SIZE
    assert hub.bytes_served() == BIG_SIZE
    log = rig.gate.entries()
    assert {e.host for e in log} == {"127.0.0.1"}
    assert any("/_cdn/" in e.path and e.purpose.startswith("download") for e in log)
    assert any(e.path.startswith("/api/models/") for e in log)
    assert "secret" not in rig.gate.log_path.read_text()  # signed CDN query never logged


def test_dropped_connection_resumes_without_refetching(hub, payload, tmp_path):
    hub.add_fault(REPO, BIG, Fault("drop", after=700_000))
    hub.add_fault(REPO, BIG, Fault("drop", after=300_000))
    rig = Rig(hub, tmp_path)
    _, fetched = rig.fetch(BIG)
    assert fetched.path.read_bytes() == payload[BIG]
    gets = hub.downloads()
    assert len(gets) == 3
    assert gets[1].range == f"bytes={gets[0].sent}-"
    assert gets[2].range == f"bytes={gets[0].sent + gets[1].sent}-"
    assert hub.bytes_served() == BIG_SIZE  # not one byte fetched twice


def test_stall_is_detected_and_retried(hub, payload, tmp_path):
    hub.add_fault(REPO, BIG, Fault("stall", after=200_000, stall_s=30))
    rig = Rig(hub, tmp_path, stall_s=0.5)
    _, fetched = rig.fetch(BIG)
    assert fetched.path.read_bytes() == payload[BIG]
    # Two requests: the stall was detected and resumed (an undetected one would sit out
    # the server's 30 s and finish in one request).
    assert len(hub.downloads()) == 2


def test_throttling_and_server_errors_are_retried(hub, payload, tmp_path):
    hub.add_fault(REPO, BIG, Fault("status", status=429))
    hub.add_fault(REPO, BIG, Fault("status", status=500))
    hub.add_fault(REPO, BIG, Fault("status", status=503))
    rig = Rig(hub, tmp_path)
    _, fetched = rig.fetch(BIG)
    assert fetched.path.read_bytes() == payload[BIG]
    assert [e.status for e in hub.downloads()] == [429, 500, 503, 206]


def test_persistent_failure_gives_up_and_keeps_the_part(hub, tmp_path):
    hub.add_fault(REPO, BIG, Fault("drop", after=100_000))
    hub.add_fault(REPO, BIG, Fault("status", status=500, times=-1))
    rig = Rig(hub, tmp_path, max_attempts=3)
    with pytest.raises(DownloadError, match="gave up after 3 tries.*run the same pull again"):
        rig.fetch(BIG)
    part = rig.models / REPO / (BIG + ".part")
    assert part.stat().st_size == 100_000


def test_corrupted_bytes_are_quarantined(hub, tmp_path):
    hub.add_fault(REPO, BIG, Fault("corrupt", after=123_456, times=-1))
    rig = Rig(hub, tmp_path)
    with pytest.raises(DownloadError, match="corrupt.*expected.*moved to"):
        rig.fetch(BIG)
    assert not (rig.models / REPO / BIG).exists()
    assert not (rig.models / REPO / (BIG + ".part")).exists()
    quarantined = list((tmp_path / "quarantine").iterdir())
    assert len(quarantined) == 1 and quarantined[0].stat().st_size == BIG_SIZE


def test_resume_rehashes_the_existing_part(hub, payload, tmp_path):
    rig = Rig(hub, tmp_path)
    part = rig.models / REPO / (BIG + ".part")
    part.parent.mkdir(parents=True)
    part.write_bytes(payload[BIG][:1_000_000])
    _, fetched = rig.fetch(BIG)
    assert fetched.path.read_bytes() == payload[BIG]
    assert hub.downloads()[0].range == "bytes=1000000-"
    assert hub.bytes_served() == BIG_SIZE - 1_000_000
    # A part whose bytes went bad on disk is caught by the hash, not trusted.
    fetched.path.unlink()
    part.write_bytes(b"\0" * 1_000_000)
    with pytest.raises(DownloadError, match="corrupt"):
        rig.fetch(BIG)


def test_cancel_pauses_and_pull_again_resumes(hub, payload, tmp_path):
    hub.add_fault(REPO, BIG, Fault("throttle", bytes_per_s=2_000_000, times=1))
    rig = Rig(hub, tmp_path, progress_interval_s=0)
    cancel = threading.Event()

    def stop_halfway(p: Progress) -> None:
        if p.done > 400_000:
            cancel.set()

    with pytest.raises(Cancelled, match="paused.*run the same pull again"):
        rig.fetch(BIG, progress=stop_halfway, cancel=cancel)
    part = rig.models / REPO / (BIG + ".part")
    kept = part.stat().st_size
    assert 400_000 < kept < BIG_SIZE
    _, fetched = rig.fetch(BIG)
    assert fetched.path.read_bytes() == payload[BIG]
    assert hub.downloads()[-1].range == f"bytes={kept}-"


def test_gated_repo_without_token_says_auth_login(hub, payload, tmp_path):
    with pytest.raises(AuthRequired, match="edgedesk auth login"):
        Rig(hub, tmp_path).fetch("g.gguf", repo="org/gated-GGUF")
    _, fetched = Rig(hub, tmp_path, token=GOOD_TOKEN).fetch("g.gguf", repo="org/gated-GGUF")
    assert fetched.path.read_bytes() == payload["tiny-Q4_K_M.gguf"]
    assert GOOD_TOKEN not in (tmp_path / "logs" / "network.jsonl").read_text()


def test_missing_file_and_repo_are_named(hub, tmp_path):
    rig = Rig(hub, tmp_path)
    with pytest.raises(ModelNotFound, match=r"nope\.gguf.*org/tiny-GGUF"):
        rig.fetch("nope.gguf")
    with pytest.raises(ModelNotFound, match="org/missing-GGUF"):
        rig.fetch("x.gguf", repo="org/missing-GGUF")


def test_disk_full_fails_before_the_first_byte(hub, tmp_path, monkeypatch):
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage(10**9, 10**9 - 10**6, 10**6))
    rig = Rig(hub, tmp_path)
    with pytest.raises(
        DownloadError,
        match=r"not enough free disk space.*needs 2\.1 MB.*"
        r"only 1\.0 MB is free",
    ):
        rig.fetch(BIG)
    assert hub.downloads() == []


def test_offline_makes_no_connection(hub, tmp_path):
    rig = Rig(hub, tmp_path, offline=True)
    with pytest.raises(NetworkBlocked, match="offline mode"):
        rig.fetch(BIG)
    assert hub.log == []


def test_two_pulls_of_one_file_do_not_collide(hub, payload, tmp_path):
    hub.add_fault(REPO, BIG, Fault("throttle", bytes_per_s=8_000_000, times=-1))
    results: list[object] = []

    def one() -> None:
        try:
            results.append(Rig(hub, tmp_path).fetch(BIG)[1].path)
        except Exception as exc:  # reported below
            results.append(exc)

    threads = [threading.Thread(target=one) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    target = tmp_path / "models" / REPO / BIG
    assert results == [target, target]
    assert target.read_bytes() == payload[BIG]
    assert hub.bytes_served() == BIG_SIZE  # the second waited, then found it done


def test_split_shards_are_one_model(tmp_path, tiny_chat):
    data = tiny_chat.read_bytes()
    third = len(data) // 3
    shards = {
        f"m-Q4_K_M-0000{i + 1}-of-00003.gguf": data[i * third : (i + 1) * third if i < 2 else None]
        for i in range(3)
    }
    with FakeHub() as fake:
        fake.add_repo("org/split-GGUF", shards)
        rig = Rig(fake, tmp_path)
        index = InstalledIndex(tmp_path / "installed.json", rig.models)
        target = parse_target("org/split-GGUF:m-Q4_K_M-00001-of-00003.gguf", load_catalog())
        model = pull(
            target, hub=rig.client, downloader=rig.downloader, index=index, models_dir=rig.models
        )
    assert model.id == "m-Q4_K_M"
    assert [p.name for p in model.paths] == sorted(shards)
    assert b"".join(p.read_bytes() for p in model.paths) == data
    assert index.lookup("m-Q4_K_M") == model.paths
    commits = [
        e.path
        for e in fake.log
        if e.path.startswith("/api/models/org/split-GGUF")
        and "/paths-info/" not in e.path
        and "/tree/" not in e.path
    ]
    assert len(commits) == 1, commits  # the commit is resolved once per pull


def _reading(ident: int) -> bool:
    """Whether thread ``ident`` waits in a socket read (httpcore's blocking backend)."""
    frame = sys._current_frames().get(ident)
    return (
        frame is not None
        and frame.f_code.co_name == "read"
        and Path(frame.f_code.co_filename).match("httpcore/_backends/sync.py")
    )


@pytest.mark.parametrize("waking", [True, False])
def test_cancel_during_a_stall_lands_at_once_with_a_cancel_event(hub, payload, tmp_path, waking):
    from desktop.catalog._cancel import CancelEvent

    hub.add_fault(REPO, BIG, Fault("stall", after=200_000, stall_s=30))
    # The stall timeout a plain event must wait out; every chunk reported. A waking event
    # gets a timeout longer than the server's stall: were the socket not shut, the server
    # would resume first and more than the 200,000 bytes would land (checked below), so
    # no clock decides the verdict.
    rig = Rig(hub, tmp_path, stall_s=120.0 if waking else 3.0, progress_interval_s=0)
    cancel = CancelEvent() if waking else threading.Event()
    part = rig.models / REPO / (BIG + ".part")
    received = threading.Event()

    def seen(progress: Progress) -> None:
        if progress.done >= 200_000:  # the part file itself is buffered: not a signal
            received.set()

    fetching = threading.get_ident()
    blocked: list[bool] = []

    def cancel_once_stalled() -> None:
        try:  # the server is silent now: wait until the download blocks in its read
            received.wait(10)
            blocked.append(wait_until(lambda: _reading(fetching), 10, "a blocked read"))
        finally:
            cancel.set()

    threading.Thread(target=cancel_once_stalled, daemon=True).start()
    started = time.monotonic()
    with pytest.raises(Cancelled, match="paused"):
        rig.fetch(BIG, cancel=cancel, progress=seen)
    waited = time.monotonic() - started
    assert blocked == [True]  # cancelled while blocked in the read, not between chunks
    if not waking:
        assert waited >= 3.0  # a plain event is only seen when the read times out
    assert part.stat().st_size == 200_000  # what arrived is kept for the resume
    assert len(hub.downloads()) == 1  # cancelled, not retried


def test_a_read_ended_oddly_by_the_cancel_is_the_pause(hub, payload, tmp_path, monkeypatch):
    # Shutting a TLS socket for a cancel can end the blocked read with a ValueError
    # ("Read on closed or unwrapped SSL socket") that httpx does not turn into a
    # TransportError; a Pause must still be a pause, not a failed download.
    import httpx

    rig = Rig(hub, tmp_path)
    cancel = threading.Event()
    original = httpx.Response.iter_bytes

    def iter_bytes(self, *args, **kwargs):
        got = 0
        for chunk in original(self, *args, **kwargs):
            yield chunk
            got += len(chunk)
            if got > 400_000:  # the user pauses while the worker waits for the next read
                cancel.set()
                raise ValueError("Read on closed or unwrapped SSL socket.")

    monkeypatch.setattr(httpx.Response, "iter_bytes", iter_bytes)
    with pytest.raises(Cancelled, match="paused.*run the same pull again"):
        rig.fetch(BIG, cancel=cancel)
    part = rig.models / REPO / (BIG + ".part")
    kept = part.stat().st_size
    assert 400_000 < kept < BIG_SIZE  # what arrived is kept for the resume
    assert len(hub.downloads()) == 1  # paused, not retried

    monkeypatch.undo()
    _, fetched = rig.fetch(BIG)
    assert fetched.path.read_bytes() == payload[BIG]
    assert hub.downloads()[-1].range == f"bytes={kept}-"


def test_the_same_error_without_a_cancel_is_not_hidden(hub, tmp_path, monkeypatch):
    import httpx

    def iter_bytes(self, *args, **kwargs):
        raise ValueError("something else broke")
        yield b""  # a generator, like the real one

    monkeypatch.setattr(httpx.Response, "iter_bytes", iter_bytes)
    with pytest.raises(ValueError, match="something else broke"):
        Rig(hub, tmp_path).fetch(BIG, cancel=threading.Event())


def test_a_cancel_event_runs_late_wakers_at_once_and_forgets_undone_ones():
    from desktop.catalog._cancel import CancelEvent

    cancel, calls = CancelEvent(), []
    undo = cancel.on_set(lambda: calls.append("first"))
    cancel.on_set(lambda: calls.append("second"))
    undo()
    cancel.set()
    assert calls == ["second"]
    cancel.on_set(lambda: calls.append("late"))
    assert calls == ["second", "late"]


def test_a_same_size_file_with_other_bytes_is_downloaded_again(hub, payload, tmp_path):
    rig = Rig(hub, tmp_path)
    target = rig.models / REPO / BIG
    target.parent.mkdir(parents=True)
    target.write_bytes(bytes(BIG_SIZE))  # right size, wrong bytes (a damaged copy)
    remote, fetched = rig.fetch(BIG)
    assert fetched.path.read_bytes() == payload[BIG]
    assert fetched.sha256 == remote.sha256
    assert hub.bytes_served() == BIG_SIZE
    _, again = rig.fetch(BIG)  # a good copy is kept as it is
    assert again.sha256 == remote.sha256 and hub.bytes_served() == BIG_SIZE
