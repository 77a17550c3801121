"""``edgedesk docs``, ``ask`` and ``chats`` end to end, with the tiny GGUF models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop.base.config import Paths
from desktop.cli import main
from desktop.store._chat_records import ChatMessage
from desktop.store._chats import ChatStore


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "mydocs"
    root.mkdir()
    (root / "zoo.txt").write_text(
        "The zebra lives in the zoo.\n\nPenguins swim.\n", encoding="utf-8"
    )
    (root / "中文.md").write_text("向量检索的模型\n", encoding="utf-8")
    (root / "broken.pdf").write_bytes(b"%PDF-1.4 garbage")
    return root


def test_docs_add_list_search_rescan(
    folder: Path, tiny_embed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [
        "docs",
        "add",
        str(folder),
        "--collection",
        "mine",
        "--embedding-model",
        str(tiny_embed),
    ]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert f"skipped {folder / 'broken.pdf'}: not a readable PDF" in out
    assert "mine: 2 added, 0 updated, 0 unchanged, 0 removed, 1 skipped" in out

    assert main(["docs", "list"]) == 0
    out = capsys.readouterr().out
    assert "mine: 2 documents" in out and str(folder) in out

    assert main(["docs", "search", "zebra", "--collection", "mine"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"1. {folder / 'zoo.txt'} lines 1-3")
    assert "The zebra lives in the zoo." in out

    assert main(["docs", "search", "检索"]) == 0
    assert capsys.readouterr().out.startswith(f"1. {folder / '中文.md'} line 1")

    (folder / "zoo.txt").unlink()
    assert main(args) == 0  # running add again rescans and drops the deleted file
    out = capsys.readouterr().out
    assert "0 added, 0 updated, 1 unchanged, 1 removed, 1 skipped" in out
    assert main(["docs", "search", "zebra", "-k", "10"]) == 0
    assert "zoo.txt" not in capsys.readouterr().out


def test_docs_search_of_unknown_collection_fails_cleanly(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["docs", "search", "x", "--collection", "nope"]) == 2
    assert "no collection named 'nope'" in capsys.readouterr().err


def test_ask_answers_with_sources(
    folder: Path, tiny_embed: Path, tiny_chat: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["docs", "add", str(folder), "--collection", "mine", "--embedding-model", str(tiny_embed)])
    capsys.readouterr()
    code = main(
        [
            "ask",
            "where does the zebra live",
            "--collection",
            "mine",
            "--model",
            str(tiny_chat),
            "--max-tokens",
            "8",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "Sources" in out and f"{folder / 'zoo.txt'} lines 1-3" in out


@pytest.mark.parametrize(
    "verb", [["ask", "why?", "--collection", "mine"], ["run", "model-x", "hi"], ["chat", "model-x"]]
)
@pytest.mark.parametrize(
    ("flag", "message"),
    [
        (["--max-tokens", "0"], "--max-tokens must be at least 1"),
        (["--temperature", "9"], "--temperature must be between 0 and 5"),
    ],
)
def test_answering_verbs_refuse_unusable_sampling_flags_alike(
    verb: list[str], flag: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Checked before any model or collection is looked up, so the message is about the flag.
    assert main([*verb, *flag]) == 2
    assert message in capsys.readouterr().err


def test_chats_list_export_rm(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = ChatStore(Paths.from_env().database)
    conv = store.create_conversation("Holiday 假期", "glm")
    store.add_message(conv.id, ChatMessage("user", "Plan a trip"))
    other = store.create_conversation("Work")
    store.close()

    assert main(["chats", "list"]) == 0
    out = capsys.readouterr().out
    assert "Holiday 假期" in out and "Work" in out
    assert main(["chats", "list", "--search", "trip", "--json"]) == 0
    assert [c["id"] for c in json.loads(capsys.readouterr().out)] == [conv.id]

    target = tmp_path / "out.json"
    assert main(["chats", "export", str(conv.id), "--format", "json", "-o", str(target)]) == 0
    exported = json.loads(target.read_text(encoding="utf-8"))
    assert exported["conversations"][0]["messages"][0]["content"] == "Plan a trip"
    capsys.readouterr()
    assert main(["chats", "export"]) == 0
    assert "# Holiday 假期" in capsys.readouterr().out

    assert main(["chats", "rm", str(other.id)]) == 0
    assert main(["chats", "rm", "999"]) == 2
    assert main(["chats", "rm", "--all"]) == 0
    capsys.readouterr()
    assert main(["chats", "list"]) == 0
    assert "no saved conversations" in capsys.readouterr().out


def test_a_6kb_question_with_context_4096_answers_on_minilm(tmp_path: Path) -> None:
    """Settings → Context length 4096 once aborted the process on a long query to MiniLM
    (512 trained positions): ``GGML_ASSERT(i01 >= 0 && i01 < ne01)``, exit 134. The
    context of an embedding model now stops at its trained one, so the query is
    windowed and answered. A subprocess: an abort would otherwise take pytest with it."""
    import os
    import subprocess
    import sys

    from tests.benchmarks.bench_retrieval_quality import minilm_path

    minilm = minilm_path()
    assert minilm.exists(), f"the MiniLM test model is missing: {minilm}"
    home = tmp_path / "home"
    (home / "config").mkdir(parents=True)
    (home / "config" / "settings.toml").write_text("[engine]\ncontext_length = 4096\n")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "zoo.txt").write_text("The zebra lives in the zoo.\n", encoding="utf-8")

    def edgedesk(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "desktop", *args],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
            env={**os.environ, "EDGEDESK_HOME": str(home)},
        )

    added = edgedesk(
        "docs", "add", str(docs), "--collection", "c", "--embedding-model", str(minilm)
    )
    assert added.returncode == 0, added.stderr
    question = ("where does the zebra live and what does it eat there? " * 120)[:6144]
    found = edgedesk("docs", "search", question, "--collection", "c")
    assert found.returncode == 0, (found.returncode, found.stderr[-2000:])
    assert "zoo.txt" in found.stdout


def test_docs_rm_is_recorded_in_the_audit_log(
    folder: Path, tiny_embed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from desktop.base.audit import AuditLog

    paths = Paths.from_env()
    paths.config_dir.mkdir(parents=True, exist_ok=True)
    paths.settings_file.write_text("audit_log = true\n", encoding="utf-8")
    add = ["docs", "add", str(folder), "--collection", "mine", "--embedding-model"]
    assert main([*add, str(tiny_embed)]) == 0
    assert main(["docs", "rm", "mine"]) == 0
    assert "removed collection mine" in capsys.readouterr().out
    events = AuditLog(paths.log_dir / "audit").entries()
    assert [(e["event"], e.get("collection"), e.get("source")) for e in events] == [
        ("collection.removed", "mine", "cli")
    ]
    assert "zebra" not in json.dumps(events).lower()  # its name only, never its text
    assert main(["docs", "rm", "mine"]) == 2  # nothing removed: nothing recorded
    assert len(AuditLog(paths.log_dir / "audit").entries()) == 1
