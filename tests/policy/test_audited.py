"""What the audit log records of calls through the network gate (remote engines only)."""

from __future__ import annotations

from pathlib import Path

from desktop.base.audit import AuditLog, NoAudit
from desktop.base.net import NetGate, log_path_in
from desktop.policy._audited import REMOTE_ENGINE, remote_call_observer
from desktop.remote._engine import PURPOSE


def test_remote_engine_calls_are_audited_and_other_traffic_is_not(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit")
    gate = NetGate(log_path_in(tmp_path / "logs"), offline=False, allow_downloads=True)
    gate.observer = remote_call_observer(log)
    gate.record("GET", "https://huggingface.co/api/models", "hub search", sent=0, received=9)
    gate.record(
        "POST", "https://llm.corp.example/v1/chat/completions", PURPOSE, sent=12, received=34
    )
    calls = [e for e in log.entries() if e["event"] == "remote.call"]
    assert [(c["host"], c["method"], c["bytes_sent"], c["bytes_received"]) for c in calls] == [
        ("llm.corp.example", "POST", 12, 34)
    ]
    assert REMOTE_ENGINE == PURPOSE  # the two names of one purpose agree


def test_no_observer_when_the_audit_log_is_off() -> None:
    assert remote_call_observer(NoAudit()) is None
