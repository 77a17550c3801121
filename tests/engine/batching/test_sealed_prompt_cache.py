"""The disk prompt cache sealed with a key (an encrypted database's): written so the
prompt's token ids cannot be read back, resumed with the same key, never read under
another (or in the clear), and forgotten on demand.

Real llama.cpp with the tiny random-weight model; checked by the engine's counters and
the files' bytes, never by the clock.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

from desktop.engine._llama import LlamaEngine
from desktop.engine._native import LoadOptions
from desktop.engine._types import GenerationParams

GREEDY = GenerationParams(max_tokens=2, temperature=0.0)
PROMPT = "the quiet zebra keeps a secret ledger " * 8  # well over MIN_SAVED_TOKENS
KEY = bytes(range(32))


def _engine(model: Path, folder: Path, key: bytes | None) -> LlamaEngine:
    options = LoadOptions(
        context_length=512,
        parallel=1,
        prompt_cache_dir=folder,
        prompt_cache_disk_bytes=64 * 1024 * 1024,
        prompt_cache_key=key,
    )
    return LlamaEngine(model, options, model_id="tiny")


def _ask(engine: LlamaEngine, prompt: str = PROMPT) -> int:
    """Run one completion; the prompt tokens it found cached."""
    before = engine.stats().prompt_tokens_cached
    list(engine.stream_completion(prompt, GREEDY))
    return engine.stats().prompt_tokens_cached - before


def _files(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.kv"))


def _token_bytes(engine: LlamaEngine) -> bytes:
    tokens = engine.tokenize(PROMPT)[:16]
    return struct.pack(f"<{len(tokens)}i", *tokens)


def test_a_sealed_cache_hides_the_tokens_and_resumes_with_its_key(
    tiny_chat: Path, tmp_path: Path
) -> None:
    first = _engine(tiny_chat, tmp_path, KEY)
    _ask(first)
    readable = _token_bytes(first)
    first.close()
    files = _files(tmp_path)
    assert files
    for path in files:
        raw = path.read_bytes()
        assert raw.startswith(b"EDKV2\0") and readable not in raw

    again = _engine(tiny_chat, tmp_path, KEY)
    try:
        assert _ask(again, PROMPT + " and more") >= 32  # read back from the sealed file
    finally:
        again.close()


def test_a_sealed_file_is_never_read_under_another_key_or_none(
    tiny_chat: Path, tmp_path: Path
) -> None:
    sealed = _engine(tiny_chat, tmp_path, KEY)
    _ask(sealed)
    sealed.close()
    assert _files(tmp_path)

    other = _engine(tiny_chat, tmp_path, os.urandom(32))
    try:
        assert _files(tmp_path) == []  # deleted as it was listed: it does not open
        assert _ask(other) == 0
    finally:
        other.close()


def test_a_plaintext_file_is_deleted_once_the_cache_is_sealed(
    tiny_chat: Path, tmp_path: Path
) -> None:
    # A prompt cache written while the database was plaintext, then the database encrypted.
    plain = _engine(tiny_chat, tmp_path, None)
    _ask(plain)
    plain.close()
    [written] = _files(tmp_path)
    assert written.read_bytes().startswith(b"EDKV1\0")

    sealed = _engine(tiny_chat, tmp_path, KEY)
    try:
        assert not written.exists()
        assert _ask(sealed) == 0
    finally:
        sealed.close()
    assert all(p.read_bytes().startswith(b"EDKV2\0") for p in _files(tmp_path))


def test_forgetting_drops_saved_conversations_and_writes_none(
    tiny_chat: Path, tmp_path: Path
) -> None:
    engine = _engine(tiny_chat, tmp_path, KEY)
    try:
        _ask(engine)
        assert _ask(engine, PROMPT + " again") >= 32  # the slot kept it
        engine.forget_saved()
        assert _ask(engine, PROMPT + " once more") == 0  # nothing kept any more
        engine.forget_saved()
    finally:
        engine.close()
    assert _files(tmp_path) == []  # nothing was saved at unload either
