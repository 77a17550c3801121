"""A long prompt is read in pieces of a few seconds: a chat that asks hears how far it
got before its first words (one that does not ask hears nothing new), a stream beside it
keeps getting tokens, and a cancel takes effect within a piece (the tiny model, in this
process and through a worker process; seconds scaled down where pieces are timed)."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.engine._batching import loop as loop_module
from desktop.engine._batching.loop import (
    PROGRESS_MIN_PIECE,
    ROW_BLOCK,
    progress_piece,
)
from desktop.engine._llama import LlamaEngine
from desktop.engine._native import DEFAULT_N_UBATCH, LoadOptions
from desktop.engine._types import ChatCall, Delta, GenerationParams, Message, ModelSpec
from desktop.engine._worker.start import start_worker
from tests.engine.loop_gate import LoopGate, wait_for

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
    # A 9B model on a CPU reads ~15 tokens a second: a 2,048-token batch was two minutes
    # without a progress line, another stream's token or a cancel; pieces of ~3 s instead.
    assert progress_piece(None, 2048) == PROGRESS_MIN_PIECE  # not timed yet: the floor
    assert progress_piece(15.0, 2048) == PROGRESS_MIN_PIECE
    assert progress_piece(100.0, 512) == 288  # 3 s' worth, a multiple of 32
    assert progress_piece(5_000.0, 2048) == 2048  # a fast reader keeps the batch
    assert progress_piece(5_000.0, 512) == 512  # (a listening chat: the micro-batch)
    assert progress_piece(1.0, 32) == progress_piece(None, 32) == 32  # never past it


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
    assert pieces[0] == PROGRESS_MIN_PIECE  # the first, untimed
    assert pieces[1:] and all(PROGRESS_MIN_PIECE <= p < 256 for p in pieces[1:]), pieces


def _engine(tiny_chat: Path, gate: LoopGate) -> LlamaEngine:
    return LlamaEngine(
        tiny_chat,
        LoadOptions(context_length=2048, n_batch=512, n_ubatch=256, parallel=2),
        model_id="t",
        on_step=gate,
    )


def _beside_a_stream(engine: LlamaEngine, gate: LoopGate) -> tuple[list[Delta], list[Delta]]:
    """A server request's ~1,500-token prompt (three whole batches) read while a short
    completion streams: (the long request's deltas, the stream's)."""
    beside: list[Delta] = []
    gate.hold()
    runner = threading.Thread(
        target=lambda: beside.extend(
            engine.stream_completion("the cat", GenerationParams(max_tokens=40, temperature=0.0))
        )
    )
    runner.start()
    try:
        wait_for(lambda: gate.held.is_set())  # the short one is generating
    finally:
        gate.release()
    deltas = list(engine.stream_chat(_call(progress=False, repeats=25)))
    runner.join()
    usage = deltas[-1].usage
    assert usage is not None and usage.prompt_tokens > 1_000
    return deltas, beside


@pytest.fixture
def slow_reader(
    tiny_chat: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[LlamaEngine, LoopGate]]:
    """An engine whose prompt pieces are timed as a slow reader's: seconds scaled down,
    as above, so the tiny model's pieces are the floor's, as a 9B model's on a CPU."""
    monkeypatch.setattr(loop_module, "PROGRESS_STEP_S", 0.0005)
    gate = LoopGate()
    engine = _engine(tiny_chat, gate)
    yield engine, gate
    engine.close()


def test_a_stream_keeps_going_while_a_server_request_reads_a_long_prompt(
    slow_reader: tuple[LlamaEngine, LoopGate],
) -> None:
    # An agent's long prompt on a slow reader held every other stream for the whole
    # batch (two minutes at 9B on a CPU); a request that does not listen (the server's)
    # is now read in the same pieces, and the stream beside it moves at each.
    engine, gate = slow_reader
    deltas, beside = _beside_a_stream(engine, gate)
    usage = deltas[-1].usage
    assert usage is not None
    reading = [s for s in gate.steps if s.prompt_tokens > 0][1:]  # after the short prompt
    assert all(s.prompt_tokens <= PROGRESS_MIN_PIECE for s in reading), reading
    assert len(reading) >= usage.prompt_tokens // PROGRESS_MIN_PIECE
    side = beside[-1].usage
    assert side is not None and side.completion_tokens > 3  # more than 3 batches allowed
    moving = [s for s in reading if s.generation_tokens > 0]
    assert len(moving) >= min(side.completion_tokens - 1, len(reading)) - 1, reading
    # The stream's token takes a prompt row, not one past the piece: rows past a whole
    # block were another pass over the weights (7% slower reading at 9B).
    whole = [s.prompt_tokens + s.generation_tokens + s.draft_tokens for s in reading[:-1]]
    assert all(rows % ROW_BLOCK == 0 for rows in whole), reading


def test_a_fast_reader_beside_a_stream_reads_whole_batches_after_its_first_piece(
    tiny_chat: Path,
) -> None:
    # Seconds not scaled: the tiny model reads faster than a batch in 3 s, as a GPU does.
    # Its first piece is the floor (not timed yet), which beside a stream is 63 tokens
    # and must still time it, or every piece would stay the floor's.
    gate = LoopGate()
    engine = _engine(tiny_chat, gate)
    try:
        _beside_a_stream(engine, gate)
    finally:
        engine.close()
    pieces = [s.prompt_tokens for s in gate.steps if s.prompt_tokens > 0][1:]
    assert pieces[0] < PROGRESS_MIN_PIECE  # 63: the stream's token took a row
    assert max(pieces[1:]) > 256, pieces  # then the batch (511 beside the stream)


def test_a_cancel_while_a_long_prompt_is_read_takes_effect_within_a_piece(
    slow_reader: tuple[LlamaEngine, LoopGate],
) -> None:
    engine, gate = slow_reader
    cancel = threading.Event()
    deltas: list[Delta] = []
    gate.hold()
    runner = threading.Thread(
        target=lambda: deltas.extend(engine.stream_chat(_call(False, repeats=25), cancel))
    )
    runner.start()
    try:
        wait_for(lambda: gate.held.is_set())  # the first piece is read
        cancel.set()
    finally:
        gate.release()
    runner.join()
    assert deltas[-1].finish_reason == "cancelled"
    read = sum(s.prompt_tokens for s in gate.steps)
    assert read <= PROGRESS_MIN_PIECE, gate.steps  # a whole batch was 512 here
    wait_for(lambda: engine.stats().slots_busy == 0)  # its slot is free for the next
