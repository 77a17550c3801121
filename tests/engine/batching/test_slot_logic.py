"""The slot engine's pure parts: text assembly across tokens, and which slot a request gets."""

from __future__ import annotations

import random

import pytest

from desktop.engine._batching.slots import Request, Slot, SlotState, SlotStateError, choose_slot
from desktop.engine._prompting.stop_strings import TextAssembler

pytestmark = pytest.mark.fast


def _feed(assembler: TextAssembler, pieces: list[bytes]) -> str:
    return "".join(assembler.feed(p) for p in pieces)


def test_a_character_split_across_tokens_arrives_whole() -> None:
    text = TextAssembler(())
    euro = "€".encode()
    assert text.feed(euro[:1]) == "" and text.feed(euro[1:]) == "€"
    assert text.flush() == ""


def test_a_stop_string_split_across_pieces_is_never_shown() -> None:
    text = TextAssembler(("</end>",))
    shown = _feed(text, [b"hello </", b"en", b"d> more"])
    assert shown == "hello " and text.stopped and text.matched == "</end>"
    assert text.flush() == ""


def test_a_false_start_of_a_stop_string_is_released() -> None:
    text = TextAssembler(("STOP",))
    shown = _feed(text, [b"ST", b"ATE of", b" ST"])
    assert shown == "STATE of " and not text.stopped and text.matched is None
    assert text.flush() == "ST"


def _slot(seq: int, tokens: list[int], last_used: int, busy: bool = False) -> Slot:
    slot = Slot(seq, tokens=tokens, last_used=last_used)
    if busy:
        slot.request = Request([1], None, 1, 0.0, None)  # type: ignore[arg-type]
        slot.move(SlotState.PROMPT)
    return slot


def test_a_slot_goes_idle_prompt_generating_idle_and_refuses_any_other_move() -> None:
    slot = Slot(0)
    assert slot.state is SlotState.IDLE and not slot.busy
    slot.move(SlotState.PROMPT)  # admitted
    assert slot.busy
    slot.move(SlotState.GENERATING)  # first token sampled
    with pytest.raises(SlotStateError, match="slot 0: generating -> prompt"):
        slot.move(SlotState.PROMPT)  # a running request never goes back to its prompt
    slot.move(SlotState.IDLE)  # finished
    assert not slot.busy
    with pytest.raises(SlotStateError, match="idle -> generating"):
        slot.move(SlotState.GENERATING)  # nothing to generate without a prompt
    with pytest.raises(SlotStateError, match="idle -> idle"):
        slot.move(SlotState.IDLE)  # a slot is never released twice
    assert slot.state is SlotState.IDLE
    slot.move(SlotState.PROMPT)
    slot.move(SlotState.IDLE)  # cancelled, or its first token ended it, before generating
    assert slot.state is SlotState.IDLE


def test_a_slots_methods_keep_what_it_holds_and_what_its_request_still_needs_in_step() -> None:
    slot = Slot(0, tokens=[1, 2, 3, 9], checkpoint=b"window", checkpoint_at=4)
    request = Request([1, 2, 3, 4, 5], None, 8, 0.0, None, extra_cells=2)  # type: ignore[arg-type]
    slot.admit(request, 3, draft_window=8, step=7)
    assert (slot.tokens, slot.pending, slot.prompt_end) == ([1, 2, 3], [4, 5], 5)
    assert slot.checkpoint is None  # it was of a token (9) this request does not share
    assert (slot.cached, request.cached, slot.last_used, slot.extra_cells) == (3, 3, 7, 2)
    slot.read_prompt(2)
    assert (slot.tokens, slot.pending, slot.state) == ([1, 2, 3, 4, 5], [], SlotState.PROMPT)
    slot.sampled_next(6)  # the first token ends the prompt
    assert (slot.next_token, slot.state) == (6, SlotState.GENERATING)
    slot.next_decoded([7, 8])
    assert (slot.tokens[-1], slot.next_token, slot.draft) == (6, None, [7, 8])
    assert slot.take_draft() == [7, 8] and slot.draft == []
    slot.guess_taken(7)
    slot.draft_checked(2, 1, most=16)  # a miss: the next draft guesses what was taken
    assert (slot.tokens[-2:], slot.draft_window) == ([6, 7], 1)
    slot.sampled_next(9)
    slot.release()
    assert (slot.state, slot.request, slot.next_token) == (SlotState.IDLE, None, None)
    assert slot.tokens == [1, 2, 3, 4, 5, 6, 7]  # kept for the next request
    slot.keep_checkpoint(b"state")
    assert (slot.checkpoint, slot.checkpoint_at) == (b"state", 7)
    slot.cut_back(5)
    assert slot.tokens == [1, 2, 3, 4, 5]
    slot.emptied()
    assert (slot.tokens, slot.extra_cells, slot.checkpoint) == ([], 0, None)
    slot.emptied([4, 4])  # a saved conversation restored into the sequence
    assert slot.tokens == [4, 4]


def test_a_request_cut_short_in_its_prompt_leaves_the_slot_what_was_decoded() -> None:
    slot = Slot(0)
    slot.admit(Request([1, 2, 3, 4], None, 8, 0.0, None), 0, draft_window=0, step=1)  # type: ignore[arg-type]
    slot.read_prompt(2)
    slot.release()  # cancelled before its first token
    assert (slot.tokens, slot.pending, slot.state) == ([1, 2], [], SlotState.IDLE)
    with pytest.raises(SlotStateError, match="idle -> idle"):
        slot.release()  # a slot is never released twice


def test_a_continued_conversation_goes_back_to_its_slot() -> None:
    slots = [_slot(0, [1, 2, 3, 4], 5), _slot(1, [1, 9, 9, 9], 9), _slot(2, [], 0)]
    choice = choose_slot(slots, [1, 2, 3, 4, 5, 6])
    assert choice == (slots[0], 4)


def test_a_new_conversation_takes_an_empty_slot_not_one_sharing_only_a_header() -> None:
    slots = [_slot(0, [1, 2, 3, 4, 5, 6], 5), _slot(1, [], 0)]
    choice = choose_slot(slots, [1, 2, 7, 7])
    assert choice == (slots[1], 0)


def test_without_an_empty_slot_the_least_recently_used_is_taken() -> None:
    slots = [_slot(0, [5, 5, 5], 7), _slot(1, [6, 6, 6], 3), _slot(2, [1], 1, busy=True)]
    choice = choose_slot(slots, [8, 8])
    assert choice == (slots[1], 0)
    assert choose_slot([_slot(0, [1], 1, busy=True)], [1]) is None


def test_the_earliest_stop_string_is_the_one_named() -> None:
    text = TextAssembler(("later", "soon"))
    assert _feed(text, [b"it ends soon, not later"]) == "it ends "
    assert text.matched == "soon"


def _reference(stops: tuple[str, ...], pieces: list[str]) -> tuple[str, str | None]:
    """Every suffix length tried one by one: slow and obviously right."""
    shown, held = "", ""
    for piece in pieces:
        text = held + piece
        found = [(i, stop) for stop in stops if (i := text.find(stop)) >= 0]
        if found:
            cut, stop = min(found, key=lambda hit: hit[0])
            return shown + text[:cut], stop
        keep = max(
            next((n for n in range(min(len(s) - 1, len(text)), 0, -1) if text.endswith(s[:n])), 0)
            for s in stops
        )
        shown, held = shown + text[: len(text) - keep], text[len(text) - keep :]
    return shown + held, None


def test_stop_strings_hold_back_exactly_what_may_start_one() -> None:
    # Pieces over a tiny alphabet make near-misses, overlaps and repeats common.
    rng = random.Random(7)
    stops = ("aab", "ba", "<e>", "abab")
    for _ in range(2000):
        pieces = [
            "".join(rng.choice("ab<e>") for _ in range(rng.randint(0, 4)))
            for _ in range(rng.randint(1, 8))
        ]
        text = TextAssembler(stops)
        shown = _feed(text, [p.encode() for p in pieces]) + text.flush()
        assert (shown, text.matched) == _reference(stops, pieces), pieces
