"""Nothing a user chatted stays readable anywhere under EDGEDESK_HOME once it is encrypted
or deleted: every file is read as raw bytes and as little-endian int32 token ids decoded
with the model's own tokenizer (the disk prompt cache keeps prompts as token ids).

Real Gemma 3 270M through the real engine behind ``edgedesk serve``, so the prompt cache
is written as it is for users; then ``data encrypt``, ``chats rm --all``, the retention
period, a stored response's delete, or a database encrypted from the start.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from desktop.engine._llama_cpp import llama_cpp  # after the spin count, as the app
from desktop.root.context import build_context
from tests.fixtures.children import edgedesk_serving

pytestmark = pytest.mark.slow

WORD = "zanzibarquokka"
SYSTEM = "You are a careful assistant. Keep the user's notes private and answer briefly. " * 6
NOTE = f"My bank password hint is {WORD}, remember it for me please."
MIN_RUN = 4  # token-id runs shorter than this are noise in binary data


def _env(home: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "EDGEDESK_HOME": str(home), "EDGEDESK_OFFLINE": "1", **extra}


def _chat(url: str) -> str:
    """One chat completion and one stored response carrying WORD; the stored id."""
    model = httpx.get(f"{url}/models", timeout=60).json()["data"][0]["id"]
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": NOTE}]
    body = {"model": model, "messages": messages, "max_tokens": 4, "temperature": 0}
    done = httpx.post(f"{url}/chat/completions", json=body, timeout=300)
    assert done.status_code == 200, done.text
    kept = httpx.post(
        f"{url}/responses",
        json={
            "model": model,
            "instructions": SYSTEM + " (kept)",
            "input": NOTE,
            "max_output_tokens": 4,
            "store": True,
        },
        timeout=300,
    )
    assert kept.status_code == 200, kept.text
    return str(kept.json()["id"])


def _edgedesk(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "desktop", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


class Decoder:
    """Reads a file the way an attacker with the model's public tokenizer would."""

    def __init__(self, model: Path) -> None:
        self._vocab = llama_cpp.Llama(str(model), vocab_only=True, verbose=False)
        self._n_vocab = int(self._vocab.n_vocab())

    def texts(self, data: bytes) -> Iterator[str]:
        """The file as text, then every run of plausible token ids, decoded."""
        yield data.decode("utf-8", errors="ignore")
        yield data.decode("utf-16-le", errors="ignore")
        for offset in range(4):
            usable = (len(data) - offset) // 4 * 4
            ids = np.frombuffer(data[offset : offset + usable], dtype="<i4")
            valid = (ids >= 0) & (ids < self._n_vocab)
            edges = np.flatnonzero(np.diff(np.concatenate(([0], valid.view(np.int8), [0]))))
            for start, end in zip(edges[::2], edges[1::2], strict=True):
                run = ids[start:end]
                if end - start < MIN_RUN or not run.any() or (run == run[0]).all():
                    continue  # zero padding or one repeated value: no text in it
                yield self._vocab.detokenize(run.tolist()).decode("utf-8", errors="ignore")

    def readable(self, home: Path, word: str) -> list[str]:
        """Every file under ``home`` in which ``word`` can be read."""
        found = []
        for path in sorted(p for p in home.rglob("*") if p.is_file()):
            data = path.read_bytes()
            if any(word.lower() in text.lower() for text in self.texts(data)):
                found.append(str(path.relative_to(home)))
        return found


@pytest.fixture(scope="module")
def decoder(gemma_path: Path) -> Decoder:
    return Decoder(gemma_path)


@pytest.fixture(scope="module")
def chatted_home(gemma_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A plaintext install (no keyring) after a chat and a stored response, server stopped."""
    home = tmp_path_factory.mktemp("chatted") / "home"
    env = _env(home, PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring")
    env.pop("EDGEDESK_PASSPHRASE", None)
    with edgedesk_serving(gemma_path, env) as url:
        _chat(url)
    return home


def _copy(home: Path, tmp_path: Path) -> Path:
    target = tmp_path / "home"
    shutil.copytree(home, target, symlinks=True)
    return target


def test_the_guard_reads_a_plaintext_prompt_cache(chatted_home: Path, decoder: Decoder) -> None:
    # What the guard looks for is there before any protection: in the prompt cache's
    # token ids (and the plaintext database), so its silence below means something.
    readable = decoder.readable(chatted_home, WORD)
    assert any(name.startswith("cache/prompt-cache/") for name in readable), readable
    assert "data/edgedesk.db" in readable


def test_nothing_is_readable_after_data_encrypt(
    chatted_home: Path, decoder: Decoder, tmp_path: Path, file_keyring: Path
) -> None:
    home = _copy(chatted_home, tmp_path)
    done = _edgedesk(_env(home), "data", "encrypt")
    assert done.returncode == 0, done.stderr
    assert decoder.readable(home, WORD) == []


def test_nothing_is_readable_after_chats_rm_all(
    chatted_home: Path, decoder: Decoder, tmp_path: Path
) -> None:
    home = _copy(chatted_home, tmp_path)
    done = _edgedesk(_env(home), "chats", "rm", "--all")
    assert done.returncode == 0, done.stderr
    assert "deleted 1 stored API responses" in done.stdout
    assert decoder.readable(home, WORD) == []


def test_nothing_is_readable_after_the_retention_period(
    chatted_home: Path, decoder: Decoder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = _copy(chatted_home, tmp_path)
    with sqlite3.connect(home / "data" / "edgedesk.db") as conn:  # kept 55 years ago
        conn.execute("UPDATE conversations SET updated = 0")
    conn.close()
    monkeypatch.setenv("EDGEDESK_HOME", str(home))
    ctx = build_context(cli_settings={"retention_days": 30})
    try:
        ctx.maintenance()  # the hourly pass of the window and `serve` (and at open)
        assert ctx.response_store.count() == 0
    finally:
        ctx.close()
    assert decoder.readable(home, WORD) == []


def test_a_deleted_response_leaves_no_prompt_cache_behind(
    gemma_path: Path, decoder: Decoder, tmp_path: Path
) -> None:
    # In the running server: the loaded model forgets what it saved, so stopping the
    # server (which writes the prompt cache) writes none of it.
    home = tmp_path / "home"
    env = _env(home)
    with edgedesk_serving(gemma_path, env) as url:
        kept = _chat(url)
        gone = httpx.delete(f"{url}/responses/{kept}", timeout=60)
        assert gone.status_code == 200, gone.text
    readable = decoder.readable(home, WORD)
    assert not [name for name in readable if name.startswith("cache/")], readable


def test_an_encrypted_install_keeps_no_readable_prompt(
    gemma_path: Path, decoder: Decoder, tmp_path: Path, file_keyring: Path
) -> None:
    # A new install where the keyring works is encrypted from the start: the prompt
    # cache is written sealed (and still resumes the session after a restart).
    home = tmp_path / "home"
    env = _env(home)
    with edgedesk_serving(gemma_path, env) as url:
        _chat(url)
    files = list((home / "cache" / "prompt-cache").rglob("*.kv"))
    assert files and all(f.read_bytes()[:6] == b"EDKV2\0" for f in files)
    assert decoder.readable(home, WORD) == []
    with edgedesk_serving(gemma_path, env) as url:
        again = _resume(url)
    assert again["usage"]["prompt_tokens_details"]["cached_tokens"] >= 32


def _resume(url: str) -> dict[str, Any]:
    model = httpx.get(f"{url}/models", timeout=60).json()["data"][0]["id"]
    messages = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": NOTE},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": "Thanks."},
    ]
    body = {"model": model, "messages": messages, "max_tokens": 4, "temperature": 0}
    done = httpx.post(f"{url}/chat/completions", json=body, timeout=300)
    assert done.status_code == 200, done.text
    return dict(done.json())


def test_chats_rm_all_while_serve_runs_leaves_nothing_after_it_stops(
    gemma_path: Path, decoder: Decoder, tmp_path: Path
) -> None:
    # A deletion in another process reaches the running server: when it stops, it
    # writes none of what it held back to the prompt cache (issue 48, item 5).
    home = tmp_path / "home"
    env = _env(home, PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring")
    with edgedesk_serving(gemma_path, env) as url:
        _chat(url)
        done = _edgedesk(env, "chats", "rm", "--all")
        assert done.returncode == 0, done.stderr
        assert "deleted 1 stored API responses" in done.stdout
    assert decoder.readable(home, WORD) == []


def test_a_response_deleted_during_its_continuation_leaves_no_trace(
    gemma_path: Path, decoder: Decoder, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    env = _env(home, PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring")
    with edgedesk_serving(gemma_path, env) as url:
        model = httpx.get(f"{url}/models", timeout=60).json()["data"][0]["id"]
        kept = httpx.post(
            f"{url}/responses",
            json={"model": model, "instructions": SYSTEM, "input": NOTE, "max_output_tokens": 4},
            timeout=300,
        )
        assert kept.status_code == 200, kept.text
        first = kept.json()["id"]
        body = {
            "model": model,
            "input": "Now write me a long poem about the sea, please.",
            "previous_response_id": first,
            "store": False,
            "stream": True,
            "max_output_tokens": 48,
            "temperature": 0,
        }
        deleted = False
        with httpx.stream("POST", f"{url}/responses", json=body, timeout=300) as stream:
            for line in stream.iter_lines():
                if not deleted and "response.output_text.delta" in line:
                    # R1's continuation is generating in its slot: delete R1 now.
                    gone = httpx.delete(f"{url}/responses/{first}", timeout=60)
                    assert gone.status_code == 200, gone.text
                    deleted = True
        assert deleted
    assert decoder.readable(home, WORD) == []
