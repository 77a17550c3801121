"""Pictures through the slot engine: the tiny chat model with the tiny CLIP projector.

Random weights, so what the model "sees" is noise; but the path is llama.cpp's own
(``mtmd`` decodes the PNG, resizes, encodes, and the embeddings are decoded into the
request's sequence), so counts, prefix reuse, batching and errors are real.
"""

from __future__ import annotations

import io
import os
import sys
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from PIL import Image as PILImage

from desktop.base.errors import ImageRejected, InvalidRequest, ModelLoadError, VisionUnsupported
from desktop.engine._images import load_image
from desktop.engine._llama import LlamaEngine
from desktop.engine._loader import load_engine
from desktop.engine._native import LoadOptions
from desktop.engine._types import (
    MEDIA_MARKER,
    ChatCall,
    Delta,
    GenerationParams,
    Image,
    LocalPlan,
    Message,
    ModelSpec,
)
from desktop.engine._vision import ImageTokens
from tests.conftest import wait_until
from tests.engine.loop_gate import LoopGate, together
from tests.fixtures.tiny_gguf import write_tiny_mrope_projector, write_tiny_qwen2vl
from tests.near_tie import TokenStep, assert_same_answer, steps

GREEDY = GenerationParams(max_tokens=12, temperature=0.0)
IMAGE_TOKENS = 16  # the tiny projector: 56 x 56 pixels in 14 x 14 patches


def png(color: tuple[int, int, int], size: tuple[int, int] = (40, 30)) -> Image:
    out = io.BytesIO()
    PILImage.new("RGB", size, color).save(out, "PNG")
    return load_image(out.getvalue())


RED, BLUE = png((230, 20, 20)), png((20, 20, 230))


@pytest.fixture(scope="module")
def gate() -> LoopGate:
    return LoopGate()


@pytest.fixture(scope="module")
def engine(tiny_chat: Path, tiny_projector: Path, gate: LoopGate) -> Iterator[LlamaEngine]:
    # One stream per slot, so answers alone and beside others compare token for token.
    engine = LlamaEngine(
        tiny_chat,
        LoadOptions(context_length=1024, parallel=4, kv_unified=False, projector=tiny_projector),
        model_id="tiny-vision",
        on_step=gate,
    )
    yield engine
    engine.close()


def run(
    engine: LlamaEngine, messages: list[Message], params: GenerationParams = GREEDY
) -> tuple[str, Delta]:
    chunks = list(engine.stream_chat(ChatCall.of(messages, params)))
    return "".join(c.text for c in chunks), chunks[-1]


def ask(image: Image, text: str = f"what is in {MEDIA_MARKER} this picture") -> list[Message]:
    return [Message("user", text, images=(image,))]


def test_image_tokens_are_counted_in_the_prompt(engine: LlamaEngine) -> None:
    assert engine.vision
    tokens, media = engine.chat_tokens(ChatCall.of(ask(RED)))
    text_only = engine.prompt_tokens(
        engine.render(ChatCall.of([Message("user", "what is in  this picture")]))
    )
    assert sum(1 for t in tokens if t < 0) == IMAGE_TOKENS
    assert [m.n_tokens for m in media.values()] == [IMAGE_TOKENS]
    _, final = run(engine, ask(RED))
    assert final.usage is not None
    assert (
        final.usage.prompt_tokens == len(tokens) == engine.count_chat_tokens(ChatCall.of(ask(RED)))
    )
    assert final.usage.prompt_tokens >= len(text_only) + IMAGE_TOKENS - 2  # "in  this" spacing


def test_the_image_goes_where_its_marker_is(engine: LlamaEngine) -> None:
    tokens, media = engine.chat_tokens(
        ChatCall.of(ask(RED, f"first words {MEDIA_MARKER} then more"))
    )
    (start,) = media
    before = engine.detokenize(tokens[:start])
    after = engine.detokenize([t for t in tokens[start + IMAGE_TOKENS :]])
    assert before.endswith("first words ") and after.lstrip().startswith("then more")


def test_images_without_a_marker_go_before_the_text(engine: LlamaEngine) -> None:
    tokens, media = engine.chat_tokens(
        ChatCall.of([Message("user", "describe", images=(RED, BLUE))])
    )
    starts = sorted(media)
    assert len(starts) == 2 and starts[1] == starts[0] + IMAGE_TOKENS
    assert "describe" in engine.detokenize(tokens[starts[1] + IMAGE_TOKENS :])
    assert "describe" not in engine.detokenize(tokens[: starts[0]])


def test_marker_text_without_images_stays_text(engine: LlamaEngine) -> None:
    tokens, media = engine.chat_tokens(
        ChatCall.of([Message("user", f"the string {MEDIA_MARKER} here")])
    )
    assert not media and all(t >= 0 for t in tokens)
    assert MEDIA_MARKER in engine.detokenize(tokens)


def test_the_model_sees_the_picture(engine: LlamaEngine) -> None:
    params = GenerationParams(max_tokens=1, temperature=0.0, logprobs=5)

    def first_top(image: Image) -> dict[str, float]:
        chunks = list(engine.stream_chat(ChatCall.of(ask(image), params)))
        return dict(next(lp for c in chunks for lp in c.logprobs).top)

    red, blue, red_again = first_top(RED), first_top(BLUE), first_top(png((230, 20, 20)))
    assert red != blue
    assert red == pytest.approx(red_again, abs=1e-3)


def test_the_next_turn_reuses_the_prefix_with_the_image(engine: LlamaEngine) -> None:
    first = ask(png((10, 200, 10)), f"turn one {MEDIA_MARKER} please")  # a new picture
    encoded = engine.stats().images_encoded
    answer, final1 = run(engine, first)
    before = engine.stats()
    assert before.images_encoded == encoded + 1
    follow = [*first, Message("assistant", answer), Message("user", "and then")]
    _, final2 = run(engine, follow)
    assert final1.usage is not None and final2.usage is not None
    # Turn 2's cached prefix covers turn 1's whole prompt, the 16 image tokens included.
    assert final2.usage.cached_tokens >= final1.usage.prompt_tokens - 1
    processed = engine.stats().prompt_tokens_processed - before.prompt_tokens_processed
    assert processed == final2.usage.prompt_tokens - final2.usage.cached_tokens
    assert engine.stats().images_encoded == before.images_encoded  # not encoded again


def test_a_different_picture_ends_the_reused_prefix(tiny_chat: Path, tiny_projector: Path) -> None:
    engine = LlamaEngine(
        tiny_chat, LoadOptions(context_length=512, parallel=1, projector=tiny_projector)
    )
    try:
        text = f"same words {MEDIA_MARKER} same words after the picture"
        run(engine, ask(RED, text))
        tokens, media = engine.chat_tokens(ChatCall.of(ask(BLUE, text)))
        _, second = run(engine, ask(BLUE, text))
        _, third = run(engine, ask(BLUE, text + " again"))
    finally:
        engine.close()
    assert second.usage is not None and third.usage is not None
    # The one slot held the red picture at that place: the words before it are reused,
    # nothing from the picture on; the same picture again is reused whole.
    assert second.usage.cached_tokens == min(media)
    assert second.usage.prompt_tokens == len(tokens)
    assert third.usage.cached_tokens > min(media) + IMAGE_TOKENS


def greedy_steps(engine: LlamaEngine, messages: list[Message]) -> list[TokenStep]:
    """The greedy answer token by token, with each step's two best candidates."""
    chunks = list(engine.stream_chat(ChatCall.of(messages, replace(GREEDY, logprobs=2))))
    return steps(lp for c in chunks for lp in c.logprobs)


def test_a_picture_request_runs_beside_text_requests(engine: LlamaEngine, gate: LoopGate) -> None:
    texts = [[Message("user", p)] for p in ("hello world", "the dog is", "edge desk chat")]
    picture = ask(BLUE, f"look {MEDIA_MARKER} at it")
    alone = [greedy_steps(engine, m) for m in [picture, *texts]]
    first = len(gate.steps)
    results = together(
        engine, gate, [lambda m=m: greedy_steps(engine, m) for m in [picture, *texts]]
    )
    assert max(s.generation_tokens for s in gate.steps[first:]) == 4  # one shared loop
    # The same answers as alone, up to llama.cpp's rounding for the batch (tests/near_tie.py).
    for index, (solo, beside) in enumerate(zip(alone, results, strict=True)):
        assert_same_answer(solo, beside, f"request {index}")


def test_a_picture_requests_first_token_comes_in_the_step_that_decodes_the_picture(
    engine: LlamaEngine, gate: LoopGate
) -> None:
    # As llama-server: one decode for the (new) words before a picture, then each
    # picture's embeddings with the words after it in one step; the step with the last
    # picture samples the first token. No step waits for a picture alone.
    one = GenerationParams(max_tokens=1, temperature=0.0)
    first = len(gate.steps)
    run(engine, ask(png((7, 8, 9)), f"zebra words {MEDIA_MARKER} then more"), one)
    assert len(gate.steps) - first == 2
    first = len(gate.steps)
    two = (png((9, 8, 7)), png((8, 9, 7)))
    run(engine, [Message("user", f"yak {MEDIA_MARKER} and {MEDIA_MARKER} too", images=two)], one)
    assert len(gate.steps) - first == 3


def test_two_pictures_in_one_conversation(engine: LlamaEngine) -> None:
    messages = [
        Message("user", f"{MEDIA_MARKER} vs {MEDIA_MARKER}", images=(RED, BLUE)),
        Message("assistant", "they differ"),
        Message("user", f"and {MEDIA_MARKER}?", images=(RED,)),
    ]
    tokens, media = engine.chat_tokens(ChatCall.of(messages))
    assert len(media) == 3 and sum(1 for t in tokens if t < 0) == 3 * IMAGE_TOKENS
    _, final = run(engine, messages)
    assert final.usage is not None and final.usage.prompt_tokens == len(tokens)
    assert final.finish_reason in ("length", "stop")


def test_bytes_that_are_not_a_picture_are_refused(engine: LlamaEngine) -> None:
    fake = Image(data=b"PK\x03\x04 not a picture", mime="image/png", sha256="0" * 64)
    with pytest.raises(ImageRejected, match="ZIP"):
        run(engine, ask(fake))
    _, final = run(engine, ask(RED))  # the engine serves on
    assert final.usage is not None and final.usage.prompt_tokens > IMAGE_TOKENS


def test_a_text_model_given_a_picture_says_so(tiny_chat: Path) -> None:
    engine = LlamaEngine(
        tiny_chat, LoadOptions(context_length=256, parallel=1), model_id="tiny-text"
    )
    try:
        assert not engine.vision
        with pytest.raises(VisionUnsupported, match="'tiny-text' cannot see images") as caught:
            run(engine, ask(RED))
        assert caught.value.http_status == 400 and caught.value.model == "tiny-text"
    finally:
        engine.close()


def test_the_loader_opens_the_plans_projector(tiny_chat: Path, tiny_projector: Path) -> None:
    spec = ModelSpec(
        path=tiny_chat,
        model_id="tiny-vision",
        context_length=256,
        plan=LocalPlan(parallel=1, projector=tiny_projector),
    )
    engine = load_engine(spec)
    try:
        assert engine.vision
        _, final = run(engine, ask(RED))
        assert final.usage is not None and final.usage.prompt_tokens > IMAGE_TOKENS
    finally:
        engine.close()


def test_a_file_that_is_no_projector_fails_the_load(tiny_chat: Path, tmp_path: Path) -> None:
    bogus = tmp_path / "mmproj.gguf"
    bogus.write_bytes(b"GGUF" + b"\0" * 64)
    with pytest.raises(ModelLoadError, match="vision projector"):
        LlamaEngine(tiny_chat, LoadOptions(context_length=256, parallel=1, projector=bogus))


@pytest.fixture(scope="module")
def mrope_engine(models_dir: Path) -> Iterator[LlamaEngine]:
    lm = write_tiny_qwen2vl(models_dir / "tiny-qwen2vl.gguf")
    projector = write_tiny_mrope_projector(models_dir / "tiny-qwen2vl-mmproj.gguf")
    engine = LlamaEngine(
        lm,
        LoadOptions(context_length=1024, parallel=2, projector=projector),
        model_id="tiny-qwen2vl",
    )
    yield engine
    engine.close()


def test_m_rope_images_take_fewer_positions_than_tokens(mrope_engine: LlamaEngine) -> None:
    engine = mrope_engine
    picture = png((30, 160, 90), (120, 90))
    first = ask(picture, f"turn one {MEDIA_MARKER} please")
    tokens, media = engine.chat_tokens(ChatCall.of(first))
    (piece,) = media.values()
    assert piece.n_pos < piece.n_tokens  # M-RoPE: a 2-D grid of tokens, fewer positions
    answer, final1 = run(engine, first)
    assert final1.usage is not None
    assert final1.usage.prompt_tokens == len(tokens) + piece.n_tokens - piece.n_pos
    assert engine.count_chat_tokens(ChatCall.of(first)) == final1.usage.prompt_tokens
    _, final2 = run(engine, [*first, Message("assistant", answer), Message("user", "and")])
    assert final2.usage is not None
    assert final2.usage.cached_tokens >= len(tokens) - 1  # the picture reused on turn 2


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice is Linux's")
def test_pictures_beside_generating_requests_encode_at_lower_priority(
    engine: LlamaEngine, gate: LoopGate, monkeypatch: pytest.MonkeyPatch
) -> None:
    projector = engine._projector
    assert projector is not None
    niced: list[int] = []  # the encoding thread's priority, read while it encodes
    real = projector._encode

    def spy(piece: ImageTokens) -> None:
        niced.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        real(piece)

    monkeypatch.setattr(projector, "_encode", spy)
    texts = [[Message("user", "hello world")], [Message("user", "the dog is")]]
    gate.hold()  # the text requests hold slots while the picture is encoded
    threads = [threading.Thread(target=run, args=(engine, m)) for m in texts]
    for thread in threads:
        thread.start()
    try:
        wait_until(
            lambda: gate.held.is_set() and engine.stats().slots_busy >= 1,
            20,
            "a text request generating",
        )
        encoded = engine.stats().images_encoded
        engine.chat_tokens(ChatCall.of(ask(png((1, 2, 3)))))
        assert engine.stats().images_encoded == encoded  # counting tokens encodes nothing
        picture = threading.Thread(target=run, args=(engine, ask(png((4, 5, 6)))))
        picture.start()
        wait_until(lambda: engine.stats().images_encoded == encoded + 1, 20, "the encode")
    finally:
        gate.release()
    for thread in [*threads, picture]:
        thread.join()
    # 10 nicer than the process, as far as the OS goes (19: a suite run under nice 19).
    assert niced and max(niced) == min(os.getpriority(os.PRIO_PROCESS, 0) + 10, 19)
    # The encoding thread ended with its encode: no thread of it (nor its OpenMP pool,
    # which would slow the decode loop's every token) is left.
    assert not [t for t in threading.enumerate() if t.name.startswith("edgedesk-vision")]


def test_a_picture_the_template_leaves_out_is_a_clear_error(
    tiny_chat_no_template: Path, tiny_projector: Path
) -> None:
    # A template that shows only the last message drops the first turn's picture.
    engine = LlamaEngine(
        tiny_chat_no_template,
        LoadOptions(context_length=256, parallel=1, projector=tiny_projector),
        chat_template="{{ messages[-1]['content'] }}<|assistant|>",
    )
    try:
        messages = [*ask(RED), Message("assistant", "red"), Message("user", "and now?")]
        with pytest.raises(InvalidRequest, match="shows 0 of the 1 images"):
            run(engine, messages)
    finally:
        engine.close()


def test_hostile_pictures_never_reach_llama_cpp(engine: LlamaEngine) -> None:
    from tests.fixtures.pictures import bomb_png

    good = RED.data
    for data, why in (
        (bomb_png(), "megapixels|decompression bomb"),
        (good[: len(good) // 2], "truncated PNG"),
        (b"\xff\xd8\xff\xe0\xff\xf0" + b"\0" * 40, "JPEG"),
    ):
        with pytest.raises(ImageRejected, match=why):
            run(engine, ask(Image(data=data, mime="image/png", sha256="f" * 64)))


def test_a_wrong_sha256_does_not_borrow_another_pictures_cache(engine: LlamaEngine) -> None:
    liar = Image(data=BLUE.data, mime="image/png", sha256=RED.sha256)
    tokens, _ = engine.chat_tokens(ChatCall.of(ask(liar)))
    honest, _ = engine.chat_tokens(ChatCall.of(ask(BLUE)))
    assert tokens == honest


def test_a_picture_checked_on_the_way_in_and_one_made_by_hand_read_the_same(
    engine: LlamaEngine,
) -> None:
    by_hand = Image(data=RED.data, mime=RED.mime, sha256=RED.sha256)
    assert RED.checked and not by_hand.checked  # only by_hand is checked again here
    assert (
        engine.chat_tokens(ChatCall.of(ask(by_hand)))[0]
        == engine.chat_tokens(ChatCall.of(ask(RED)))[0]
    )
    # Two requests: the same answer up to llama.cpp's rounding for the prompt (picture
    # included) found cached the second time (tests/near_tie.py).
    checked = greedy_steps(engine, ask(RED))
    assert_same_answer(checked, run(engine, ask(by_hand))[0], "picture made by hand")


def test_a_conversation_with_a_picture_survives_unloading(
    tiny_chat: Path, tiny_projector: Path, tmp_path: Path
) -> None:
    options = LoadOptions(
        context_length=512,
        parallel=2,
        prompt_cache_dir=tmp_path,
        prompt_cache_disk_bytes=64 * 1024 * 1024,
        projector=tiny_projector,
    )
    first = ask(png((90, 90, 200)), f"look at {MEDIA_MARKER} this one, the picture")
    engine = LlamaEngine(tiny_chat, options)
    try:
        answer, before = run(engine, first)
    finally:
        engine.close()  # the slot's conversation, picture included, goes to disk
    engine = LlamaEngine(tiny_chat, options)
    try:
        _, after = run(engine, [*first, Message("assistant", answer), Message("user", "more")])
        assert before.usage is not None and after.usage is not None
        assert after.usage.cached_tokens >= before.usage.prompt_tokens - 1
        assert engine.stats().images_encoded == 0  # restored, not encoded again
    finally:
        engine.close()


def test_a_picture_whose_cache_went_meanwhile_is_encoded_by_the_loop(
    tiny_chat: Path, tiny_projector: Path
) -> None:
    gate = LoopGate()
    engine = LlamaEngine(
        tiny_chat,
        LoadOptions(
            context_length=512,
            parallel=2,
            kv_unified=False,
            state_cache_bytes=0,
            projector=tiny_projector,
        ),
        on_step=gate,
    )
    try:
        picture = ask(png((200, 200, 20)), f"the yellow one {MEDIA_MARKER} is here")
        alone = greedy_steps(engine, picture)  # slot 1 now holds it
        engine._projector._cache.clear()  # type: ignore[union-attr]  # as after a reload
        long = GenerationParams(max_tokens=40, temperature=0.0)
        gate.hold()
        busy = threading.Thread(target=run, args=(engine, [Message("user", "hello")], long))
        busy.start()  # takes slot 2; the loop is held after its first decode
        wait_until(
            lambda: gate.held.is_set() and engine.stats().slots_busy == 1,
            20,
            "slot 2 busy, the loop held",
        )
        other = threading.Thread(
            target=run,
            args=(
                engine,
                [Message("user", "dog cat")],
            ),
        )
        other.start()  # waits for the loop, then takes slot 1, pushing the picture out
        wait_until(lambda: engine.stats().requests_waiting == 1, 20, "one waiting")
        encoded = engine.stats().images_encoded
        results: list[tuple[list[TokenStep], Delta]] = []

        def ask_again() -> None:
            chunks = list(engine.stream_chat(ChatCall.of(picture, replace(GREEDY, logprobs=2))))
            results.append((steps(lp for c in chunks for lp in c.logprobs), chunks[-1]))

        again = threading.Thread(target=ask_again)
        again.start()  # the hint says slot 1 holds the picture: no encode ahead
        wait_until(lambda: engine.stats().requests_waiting == 2, 20, "two waiting")
        assert engine.stats().images_encoded == encoded
        gate.release()
        for thread in (busy, other, again):
            thread.join()
        ((answer, final),) = results
        # The loop found no embeddings on the request and encoded the picture itself,
        # decoded it into the slot again, and the answer is the same (up to llama.cpp's
        # rounding for another batch: tests/near_tie.py).
        assert engine.stats().images_encoded == encoded + 1
        assert final.usage is not None and final.usage.cached_tokens < IMAGE_TOKENS
        assert_same_answer(alone, answer, "encoded again")
    finally:
        gate.release()
        engine.close()


def test_a_client_gone_after_the_headers_encodes_no_picture(engine: LlamaEngine) -> None:
    # The stream says ADMITTED before the pictures are encoded (the route answers then);
    # a client that leaves at that point must not cost an encode per picture.
    cancel = threading.Event()
    encoded = engine.stats().images_encoded
    stream = engine.stream_chat(ChatCall.of(ask(png((90, 90, 200))), GREEDY), cancel)
    assert next(stream).admitted
    cancel.set()
    rest = list(stream)
    assert engine.stats().images_encoded == encoded
    assert [c.finish_reason for c in rest] == ["cancelled"], rest
