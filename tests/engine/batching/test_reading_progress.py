"""A chat that asks for it hears how far its prompt has been read, one micro-batch at a
time, before its first words; one that does not ask hears nothing new (the tiny model,
in this process and through a worker process)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.engine._batching import loop as loop_module
from desktop.engine._batching.loop import PROGRESS_MIN_PIECE, progress_piece
from desktop.engine._llama import LlamaEngine
from desktop.engine._native import DEFAULT_N_UBATCH, LoadOptions
from desktop.engine._types import ChatCall, Delta, GenerationParams, Message, ModelSpec
from desktop.engine._worker.start import start_worker

UBATCH = 64
OPTIONS = LoadOptions(context_length=2048, n_batch=512, n_ubatch=UBATCH)
SENTENCE = "Tell me about lighthouses and the keepers who lived in them. "


def _call(progress: bool, repeats: int = 8) -> ChatCall:  # 8: ~500 tokens
    return ChatCall.of(
        [Message("user", SENTENCE * repeats)],
        GenerationParams(max_tokens=4, temperature=0.0),
        progress=progress,
    )


def _check_progress(deltas: list[Delta], ubatch: int = UBATCH) -> None:
    reads = [d.read for d in deltas if d.read is not None]
    final = deltas[-1]
    assert final.usage is not None
    total = final.usage.prompt_tokens
    assert total > 2 * ubatch
    # Admitted at 0 read, then one a micro-batch, never past the end, all before a word.
    assert reads[0] == (0, total)
    done = [r[0] for r in reads]
    assert done == sorted(set(done)) and all(r[1] == total for r in reads)
    assert len(reads) >= total // ubatch - 1 and done[-1] < total
    first_words = next(i for i, d in enumerate(deltas) if d.text or d.reasoning or d.is_final)
    last_read = max(i for i, d in enumerate(deltas) if d.read is not None)
    assert last_read < first_words
    for d in deltas:  # a progress delta carries nothing else
        if d.read is not None:
            assert d == Delta(read=d.read)


@pytest.fixture(scope="module")
def engine(tiny_chat: Path) -> Iterator[LlamaEngine]:
    loaded = LlamaEngine(tiny_chat, OPTIONS, model_id="tiny")
    yield loaded
    loaded.close()


def test_a_chat_that_asks_hears_its_prompt_read_a_micro_batch_at_a_time(
    engine: LlamaEngine,
) -> None:
    _check_progress(list(engine.stream_chat(_call(progress=True))))


def test_a_chat_that_does_not_ask_hears_no_progress(engine: LlamaEngine) -> None:
    deltas = list(engine.stream_chat(_call(progress=False)))
    assert [d for d in deltas if d.read is not None] == []
    assert deltas[-1].usage is not None and deltas[-1].usage.completion_tokens > 0


def test_progress_crosses_the_worker_process(tiny_chat: Path, tmp_path: Path) -> None:
    spec = ModelSpec(tiny_chat, "tiny", context_length=2048)
    worker = start_worker(spec, log_path=tmp_path / "tiny.log")
    try:  # the default micro-batch: a prompt of three
        deltas = list(worker.stream_chat(_call(progress=True, repeats=25)))
        _check_progress(deltas, DEFAULT_N_UBATCH)
    finally:
        worker.close()


def test_a_slow_reader_takes_pieces_of_a_few_seconds() -> None:
    # A 9B model on a CPU reads ~15 tokens a second: a 512-token piece was 34 s between
    # two progress lines (and before Stop took effect); pieces of ~3 s instead.
    assert progress_piece(None, 512) == 512  # not timed yet: the whole micro-batch
    assert progress_piece(15.0, 512) == PROGRESS_MIN_PIECE
    assert progress_piece(100.0, 512) == 288  # 3 s' worth, a multiple of 32
    assert progress_piece(5_000.0, 512) == 512  # a fast reader keeps the micro-batch
    assert progress_piece(1.0, 32) == 32  # never past the micro-batch


def test_pieces_shrink_to_the_readers_speed(
    tiny_chat: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Seconds scaled down: the tiny model reads tens of thousands of tokens a second, so
    # pieces of 1/2000 s' worth are smaller than its micro-batch once one was timed.
    monkeypatch.setattr(loop_module, "PROGRESS_STEP_S", 0.0005)
    engine = LlamaEngine(
        tiny_chat, LoadOptions(context_length=2048, n_batch=512, n_ubatch=256), model_id="t"
    )
    try:
        deltas = list(engine.stream_chat(_call(progress=True, repeats=25)))
    finally:
        engine.close()
    done = [d.read[0] for d in deltas if d.read is not None]
    pieces = [b - a for a, b in itertools.pairwise(done)]
    assert pieces[0] == 256  # the first, untimed
    assert pieces[1:] and all(PROGRESS_MIN_PIECE <= p < 256 for p in pieces[1:]), pieces
