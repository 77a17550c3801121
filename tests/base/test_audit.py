"""The audit log: hash chain across days, tampering found, the commands that feed it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from desktop.base.audit import AuditLog
from desktop.base.config import Paths
from desktop.policy import MachinePolicy
from desktop.root.context import build_context
from desktop.store._chat_records import ChatMessage
from desktop.store._chats import ChatStore

ROOT = Path(__file__).resolve().parents[2]
DAY = 86_400.0


class Clock:
    def __init__(self) -> None:
        self.now = 1_900_000_000.0

    def __call__(self) -> float:
        return self.now


def _filled(folder: Path) -> tuple[AuditLog, Clock]:
    clock = Clock()
    log = AuditLog(folder, clock=clock)
    for day in range(3):  # three daily files, one chain
        for i in range(4):
            log.record(
                "api.call",
                key="ide",
                endpoint="/v1/chat/completions",
                model="m",
                tokens_in=10 + i,
                tokens_out=5,
                status=200,
                request_id=f"req_{day}{i}",
            )
        clock.now += DAY
    return log, clock


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


def test_the_chain_holds_across_daily_files(tmp_path: Path) -> None:
    log, clock = _filled(tmp_path / "audit")
    assert len(log.files()) == 3
    result = log.verify()
    assert result.ok and result.lines == 12 and result.files == 3
    first = json.loads(_lines(log.files()[1])[0])
    last_of_day_one = json.loads(_lines(log.files()[0])[-1])
    assert first["prev"] == last_of_day_one["hash"]  # rotation does not break the chain
    assert [e["request_id"] for e in log.entries(since=clock.now - DAY)] == [
        "req_20",
        "req_21",
        "req_22",
        "req_23",
    ]


def test_a_removed_line_is_found(tmp_path: Path) -> None:
    log, _ = _filled(tmp_path / "audit")
    day = log.files()[1]
    lines = _lines(day)
    day.write_text("".join(lines[:1] + lines[2:]), encoding="utf-8")
    result = log.verify()
    assert not result.ok
    assert result.problems == [
        f"{day.name} line 2: does not follow the line before it (a "
        "line before it was removed or inserted)"
    ]


def test_an_edited_line_is_found(tmp_path: Path) -> None:
    log, _ = _filled(tmp_path / "audit")
    day = log.files()[0]
    lines = _lines(day)
    lines[2] = lines[2].replace('"status": 200', '"status": 403')
    day.write_text("".join(lines), encoding="utf-8")
    result = log.verify()
    assert result.problems == [
        f"{day.name} line 3: its content does not match its hash (the line was edited)"
    ]


def test_lines_cut_off_the_end_or_a_whole_day_removed_are_found(tmp_path: Path) -> None:
    log, _ = _filled(tmp_path / "audit")
    last = log.files()[-1]
    last.write_text("".join(_lines(last)[:-1]), encoding="utf-8")
    assert "last lines removed" in log.verify().problems[0]

    log, _ = _filled(tmp_path / "audit2")
    log.files()[1].unlink()
    problems = log.verify().problems
    assert any("was removed" in p for p in problems)


def test_policy_turns_it_on_and_a_policy_change_is_recorded_once(tmp_path: Path) -> None:
    folder = tmp_path / "it-audit"
    policy = MachinePolicy(
        "test", {"AuditLog": True, "AuditLogPath": str(folder), "RetentionDays": 30}
    )
    for _ in range(2):
        build_context(policy=policy).audit  # noqa: B018 - two starts, same policy
    changed = MachinePolicy(
        "test", {"AuditLog": True, "AuditLogPath": str(folder), "RetentionDays": 7}
    )
    ctx = build_context(policy=changed)
    log = ctx.audit
    assert isinstance(log, AuditLog) and log.folder == folder
    seen = [e for e in log.entries() if e["event"] == "policy.changed"]
    assert [e["values"]["retention_days"] for e in seen] == [30, 7]
    # A remote-engine call through the network gate is an audit event (no content).
    ctx.net.record(
        "POST",
        "https://llm.corp.example/v1/chat/completions",
        "remote engine",
        sent=120,
        received=480,
    )
    [call] = [e for e in log.entries() if e["event"] == "remote.call"]
    assert (call["host"], call["bytes_sent"], call["bytes_received"]) == (
        "llm.corp.example",
        120,
        480,
    )
    assert log.verify().ok


def _edgedesk(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "desktop", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=os.environ,
    )


def test_commands_feed_the_log_which_show_and_verify_read(
    file_keyring: Path, tmp_path: Path
) -> None:
    paths = Paths.from_env()
    paths.config_dir.mkdir(parents=True, exist_ok=True)
    paths.settings_file.write_text("audit_log = true\n", encoding="utf-8")
    paths.database.parent.mkdir(parents=True, exist_ok=True)
    store = ChatStore(paths.database)
    conv = store.create_conversation("Patient Zebra", "m")
    store.add_message(conv.id, ChatMessage("user", "secretdiagnosis"))
    store.close()
    for command in (
        ("keys", "create", "ide", "--models", "m"),
        ("keys", "revoke", "ide"),
        ("data", "encrypt"),
        ("data", "export-key", str(tmp_path / "k")),
        ("chats", "export", "--format", "json", "-o", str(tmp_path / "c.json")),
        ("chats", "rm", str(conv.id)),
        ("data", "move", str(tmp_path / "moved")),
    ):
        done = _edgedesk(*command)
        assert done.returncode == 0, (command, done.stderr)
    shown = _edgedesk("audit", "show", "--json")
    assert shown.returncode == 0, shown.stderr
    events = [json.loads(line) for line in shown.stdout.splitlines()]
    assert [e["event"] for e in events] == [
        "key.created",
        "key.revoked",
        "data.encrypted",
        "key.exported",
        "chats.exported",
        "chats.deleted",
        "data.moved",
    ]
    assert events[0]["scope"] == "models m" and events[2]["key_source"] == "keyring"
    assert "secretdiagnosis" not in shown.stdout and "Zebra" not in shown.stdout
    assert _edgedesk("audit", "show", "--since", "1h").stdout.count("\n") == 7
    assert _edgedesk("audit", "show", "--since", "2999-01-01").stdout == ""

    ok = _edgedesk("audit", "verify")
    assert ok.returncode == 0 and "intact: 7 lines" in ok.stdout
    [day] = AuditLog(paths.log_dir / "audit").files()
    lines = _lines(day)
    day.write_text("".join(lines[:3] + lines[4:]), encoding="utf-8")  # hide the export
    broken = _edgedesk("audit", "verify")
    assert broken.returncode == 1 and f"{day.name} line 4" in broken.stdout


def test_audit_commands_say_when_the_log_is_off() -> None:
    off = _edgedesk("audit", "verify")
    assert off.returncode == 2 and "AuditLog" in off.stderr


@pytest.mark.parametrize("bad", ["soon", "12x"])
def test_since_must_be_a_time_or_an_age(bad: str) -> None:
    assert _edgedesk("audit", "show", "--since", bad).returncode == 2


class DictAnchor:
    """The head kept outside the folder, as the OS keyring keeps it (a dict here)."""

    where = "the test anchor"

    def __init__(self) -> None:
        self.kept: tuple[str, int] | None = None
        self.reads = 0

    def read(self) -> tuple[str, int] | None:
        self.reads += 1
        return self.kept

    def write(self, head: str, lines: int) -> bool:
        self.kept = (head, lines)
        return True

    def usable(self) -> bool:
        return True


def _anchored(folder: Path, count: int = 60) -> tuple[AuditLog, DictAnchor]:
    anchor = DictAnchor()
    log = AuditLog(folder, anchor=anchor)
    for i in range(count):
        log.record("api.call", key="ide", status=200, request_id=f"req_{i}")
    return log, anchor


def test_a_deleted_head_file_is_broken(tmp_path: Path) -> None:
    for anchor in (DictAnchor(), None):  # with or without a keyring to anchor it
        folder = tmp_path / f"audit-{anchor is None}"
        log = AuditLog(folder, anchor=anchor)
        for i in range(5):
            log.record("api.call", request_id=f"req_{i}")
        (folder / "audit.head.json").unlink()
        problems = log.verify().problems
        assert any("audit.head.json is missing" in p for p in problems), problems


def test_the_last_50_lines_cut_with_the_head_deleted_or_rewritten_are_found(
    tmp_path: Path,
) -> None:
    log, _ = _anchored(tmp_path / "audit")
    [day] = log.files()
    kept = _lines(day)[:-50]
    day.write_text("".join(kept), encoding="utf-8")
    (tmp_path / "audit" / "audit.head.json").unlink()
    assert not log.verify().ok
    # The head rewritten to match the cut log: the copy outside the folder still knows.
    last = json.loads(kept[-1])["hash"]
    (tmp_path / "audit" / "audit.head.json").write_text(
        json.dumps({"hash": last, "lines": len(kept)}), encoding="utf-8"
    )
    problems = log.verify().problems
    assert problems == [
        "the log ends after 10 lines but the copy of its head in the test anchor says 60 "
        "were written (last lines removed, or a day file or the head removed or changed)"
    ]
    # The next event chains on from the true end, so the cut stays visible.
    log.record("api.call", request_id="after")
    assert not log.verify().ok


def test_a_deleted_audit_folder_is_broken(tmp_path: Path) -> None:
    import shutil

    log, _ = _anchored(tmp_path / "audit", count=3)
    shutil.rmtree(tmp_path / "audit")
    problems = log.verify().problems
    assert any("says 3 were written" in p for p in problems), problems
    # Without an anchor: no log and no head while auditing is on is still broken.
    bare = AuditLog(tmp_path / "gone")
    assert "no audit log or audit.head.json" in bare.verify().problems[0]


def test_audit_verify_says_broken_when_the_folder_was_deleted(file_keyring: Path) -> None:
    import shutil

    paths = Paths.from_env()
    paths.config_dir.mkdir(parents=True, exist_ok=True)
    paths.settings_file.write_text("audit_log = true\n", encoding="utf-8")
    assert _edgedesk("keys", "create", "ide", "--models", "m").returncode == 0
    ok = _edgedesk("audit", "verify")
    assert ok.returncode == 0 and "intact: 1 lines" in ok.stdout, ok.stdout
    shutil.rmtree(paths.log_dir / "audit")
    broken = _edgedesk("audit", "verify")
    assert broken.returncode == 1, broken.stdout
    assert "broken: the log ends after 0 lines" in broken.stdout
    assert "the OS keyring says 1 were written" in broken.stdout


def test_the_anchor_is_read_only_when_another_writer_may_have_moved_the_head(
    tmp_path: Path,
) -> None:
    # The keyring is a round trip (D-Bus on Linux) on every audited request's path: a
    # process that wrote the head itself reads it back from its own file only.
    log, anchor = _anchored(tmp_path / "audit", count=20)
    assert anchor.reads == 1  # the first line, to learn where the chain stands
    other = AuditLog(tmp_path / "audit", anchor=anchor)  # another process: window, serve
    other.record("api.call", request_id="from the server")
    log.record("api.call", request_id="after it")  # its file head moved: read again
    assert anchor.reads == 3
    assert log.verify().ok
    # A head file rewritten behind this process's back is not taken on trust either.
    (tmp_path / "audit" / "audit.head.json").write_text(
        json.dumps({"hash": "0" * 64, "lines": 1}), encoding="utf-8"
    )
    before = anchor.reads  # verify read it too
    log.record("api.call", request_id="after the rewrite")
    assert anchor.reads == before + 1 and anchor.kept is not None and anchor.kept[1] == 23


def test_a_rewritten_log_whose_keyring_head_was_deleted_is_not_intact(
    file_keyring: Path,
) -> None:
    # The keyring works, but its copy of the head is gone and the whole log was written
    # again from its start (a consistent chain and head file): nothing inside the folder
    # can tell, so verify must say the chain cannot be trusted rather than "intact".
    import shutil

    from tests.fixtures.file_keyring import FileKeyring

    paths = Paths.from_env()
    paths.config_dir.mkdir(parents=True, exist_ok=True)
    paths.settings_file.write_text("audit_log = true\n", encoding="utf-8")
    assert _edgedesk("keys", "create", "ide", "--models", "m").returncode == 0
    assert _edgedesk("audit", "verify").returncode == 0
    ring = FileKeyring()
    kept = json.loads(file_keyring.read_text(encoding="utf-8"))
    [entry] = [k for k in kept if k.startswith("EdgeDesk audit head\n")]
    ring.delete_password(*entry.split("\n"))
    folder = paths.log_dir / "audit"
    shutil.rmtree(folder)
    AuditLog(folder).record("keys.listed")  # re-chained from the start, no anchor
    broken = _edgedesk("audit", "verify")
    assert broken.returncode == 1, broken.stdout
    assert "intact" not in broken.stdout
    assert "its head in the OS keyring is missing" in broken.stdout
    assert "the chain cannot be trusted" in broken.stdout


def test_a_log_without_a_usable_keyring_is_intact_with_a_note(tmp_path: Path) -> None:
    # No keyring (the test default): nothing can be kept there, so nothing is missing.
    from desktop.base.audit import KeyringAnchor

    folder = tmp_path / "audit"
    log = AuditLog(folder, anchor=KeyringAnchor(folder))
    log.record("keys.listed")
    assert log.verify().ok
