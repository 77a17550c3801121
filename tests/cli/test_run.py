"""`edgedesk run` and friends as a user runs them: a real process, real exit codes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def edgedesk(
    *args: str, home: Path | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if home is not None:
        env["EDGEDESK_HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "desktop", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )


def test_run_streams_an_answer_from_a_gguf_path(tiny_chat: Path) -> None:
    result = edgedesk(
        "run", str(tiny_chat), "hello", "--max-tokens", "12", "--temperature", "0", "--stats"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()
    assert "12 generated tokens" in result.stderr and "tok/s" in result.stderr
    # Where the model ran, as llama.cpp placed it: this CPU build offloads nothing.
    assert "finish: length, CPU only]" in result.stderr


def test_run_with_seed_is_reproducible(tiny_chat: Path) -> None:
    args = ("run", str(tiny_chat), "hello", "--max-tokens", "10", "--seed", "42")
    first, second = edgedesk(*args), edgedesk(*args)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert first.stdout.strip() and first.stdout == second.stdout


def test_no_think_reaches_the_chat_template(tmp_path: Path) -> None:
    from tests.fixtures.tiny_gguf import TINY_TEMPLATE, write_tiny_llama

    # A template that, like GLM's, writes more when thinking is switched off.
    template = TINY_TEMPLATE + (
        "{% if enable_thinking is defined and not enable_thinking %}"
        "the cat is the dog of the world{% endif %}"
    )
    model = write_tiny_llama(tmp_path / "think.gguf", chat_template=template)
    args = ("run", str(model), "hello", "--max-tokens", "2", "--temperature", "0", "--stats")
    thinking, plain = edgedesk(*args), edgedesk(*args, "--no-think")
    assert thinking.returncode == 0 and plain.returncode == 0, thinking.stderr + plain.stderr

    def prompt_tokens(stderr: str) -> int:
        return int(stderr.rsplit("[", 1)[1].split(" prompt", maxsplit=1)[0])

    assert prompt_tokens(plain.stderr) > prompt_tokens(thinking.stderr) + 5
    raw = edgedesk("run", str(model), "hi", "--raw", "--no-think")
    assert raw.returncode == 2 and "cannot go with --raw" in raw.stderr


@pytest.mark.parametrize(
    ("make", "message", "code"),
    [
        (lambda d: d / "missing.gguf", "model file not found", 3),
        (
            lambda d: (d / "notes.gguf").write_text("hello") and d / "notes.gguf",
            "is not a GGUF model file",
            3,
        ),
        (lambda d: Path("no-such-catalog-id"), "unknown model 'no-such-catalog-id'", 3),
        (
            lambda d: Path("glm-edge-4b"),
            "not downloaded yet; run 'edgedesk models pull glm-edge-4b'",
            3,
        ),
    ],
)
def test_bad_model_arguments_give_one_line_errors(
    tmp_path: Path, make, message: str, code: int
) -> None:
    target = make(tmp_path)
    result = edgedesk("run", str(target), "hi")
    assert result.returncode == code
    assert message in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_truncated_gguf_is_reported_not_crashed(tmp_path: Path, tiny_chat: Path) -> None:
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(tiny_chat.read_bytes()[:100_000])
    result = edgedesk("run", str(cut), "hi")
    assert result.returncode == 3 and "truncated" in result.stderr
    assert "Traceback" not in result.stderr


def test_absurd_context_is_refused(tiny_chat: Path) -> None:
    result = edgedesk("run", str(tiny_chat), "hi", "--ctx", "999999999")
    assert result.returncode == 2 and "--ctx 999999999 is out of range" in result.stderr
    info = edgedesk("models", "info", str(tiny_chat), "--ctx", "0")
    assert info.returncode == 2 and "out of range" in info.stderr


def test_template_less_model_is_refused_for_chat_but_runs_raw(tiny_chat_no_template: Path) -> None:
    chat = edgedesk("run", str(tiny_chat_no_template), "hi")
    assert chat.returncode == 3 and "has no chat template" in chat.stderr
    assert "or use --raw for plain text completion" in chat.stderr  # this command's way out
    raw = edgedesk("run", str(tiny_chat_no_template), "hi", "--raw", "--max-tokens", "5")
    assert raw.returncode == 0 and raw.stdout.strip()


def test_models_list_shows_the_catalog_with_fit_verdicts() -> None:
    import json

    result = edgedesk("models", "list", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    rows = {r["id"]: r for r in data["models"]}
    assert rows["glm-4.7-flash"]["fit"] in {
        "fits on GPU",
        "fits in RAM, slower",
        "fits in RAM, slower (CPU)",
        "won't fit",
    }
    assert rows["bge-m3"]["kind"] == "embedding" and rows["bge-m3"]["installed"] is None
    text = edgedesk("models", "list").stdout
    assert "moonlight-16b-a3b" in text and "FIT" in text


def test_models_info_reads_the_header_without_loading(tiny_chat: Path) -> None:
    result = edgedesk("models", "info", str(tiny_chat), "--ctx", "1024")
    assert result.returncode == 0
    assert "architecture   llama" in result.stdout and "planned 1024" in result.stdout


def test_bad_settings_file_is_reported_with_its_path(edgedesk_home: Path, tiny_chat: Path) -> None:
    (edgedesk_home / "config").mkdir(parents=True)
    (edgedesk_home / "config" / "settings.toml").write_text("[engine]\nkeep_alive_s = -5\n")
    result = edgedesk("run", str(tiny_chat), "hi")
    assert result.returncode == 2
    assert "settings.toml" in result.stderr and "engine.keep_alive_s" in result.stderr
