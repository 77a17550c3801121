"""``edgedesk stats``: its flags over a scripted set of usage rows."""

from __future__ import annotations

import csv
import json
import time

import pytest

from desktop.base.config import NoPolicy
from desktop.cli import main
from desktop.root.context import build_context
from desktop.store._usage import UsageRow

DAY = 86_400.0


@pytest.fixture
def scripted() -> float:
    """Two keys over three days (one of them 10 days ago), written as the recorder does."""
    now = time.time()
    ctx = build_context(policy=NoPolicy())
    rows = [
        UsageRow(now - 60 * i, "ide", "Codex", "glm", "/v1/responses", 200,
                 prompt_tokens=100, completion_tokens=20, ttft_ms=200.0, total_ms=1000.0 + i)
        for i in range(10)
    ]  # fmt: skip
    rows += [
        UsageRow(now - 120, "ci", "curl", "bge", "/v1/embeddings", 200, prompt_tokens=50,
                 total_ms=30.0),
        UsageRow(now - 100, "ci", "curl", "glm", "/v1/chat/completions", 403,
                 error_code="key_scope", total_ms=2.0),
        UsageRow(now - 3 * DAY, "ide", "Codex", "glm", "/v1/responses", 200, total_ms=900.0),
        UsageRow(now - 10 * DAY, "ide", "Codex", "glm", "/v1/responses", 200, total_ms=900.0),
    ]  # fmt: skip
    ctx.usage_store.add(rows)
    ctx.close()
    return now


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    assert main(["stats", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_since_and_by_choose_the_rows_and_the_groups(scripted: float, capsys) -> None:
    doc = _json(capsys)
    assert (doc["since"], doc["by"], doc["collecting"]) == ("24h", "key", True)
    assert (doc["requests"], doc["errors"]) == (12, 1)
    groups = {g["name"]: g for g in doc["groups"]}
    assert groups["ide"]["requests"] == 10 and groups["ide"]["completion_tokens"] == 200
    assert groups["ide"]["total_ms"]["p50"] == pytest.approx(1005, rel=0.02)
    assert groups["ci"]["errors_by_kind"] == {"key_scope": 1}
    assert _json(capsys, "--since", "7d")["requests"] == 13
    assert _json(capsys, "--since", "30d")["requests"] == 14
    models = {g["name"]: g["requests"] for g in _json(capsys, "--by", "model")["groups"]}
    assert models == {"glm": 11, "bge": 1}
    clients = {g["name"]: g["requests"] for g in _json(capsys, "--by", "client")["groups"]}
    assert clients == {"Codex": 10, "curl": 2}
    days = _json(capsys, "--since", "7d", "--by", "day")["groups"]
    assert sum(g["requests"] for g in days) == 13 and len(days) >= 2
    assert all(len(g["name"]) == 10 and g["name"][4] == "-" for g in days)  # YYYY-MM-DD


def test_table_and_csv(scripted: float, capsys) -> None:
    assert main(["stats", "--by", "model"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[:3] == ["model", "requests", "errors"]
    assert "TTFT p50/p90/p99" in table[0]
    glm = next(line for line in table if line.startswith("glm"))
    assert " 11 " in glm and "1 (key_scope 1)" in glm
    assert main(["stats", "--csv"]) == 0
    rows = list(csv.DictReader(capsys.readouterr().out.splitlines()))
    assert [r["group"] for r in rows] == ["ide", "ci"]
    assert rows[1]["errors_by_kind"] == "key_scope=1" and rows[0]["prompt_tokens"] == "1000"


def test_wrong_flags_are_refused(capsys) -> None:
    with pytest.raises(SystemExit) as refused:
        main(["stats", "--since", "2w"])
    assert refused.value.code == 2
    with pytest.raises(SystemExit):
        main(["stats", "--json", "--csv"])
    assert "not allowed with" in capsys.readouterr().err


def test_no_usage_yet_says_so(capsys) -> None:
    assert main(["stats"]) == 0
    assert capsys.readouterr().out.strip() == "no API requests in the last 24h"
