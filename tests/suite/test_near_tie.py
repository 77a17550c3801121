"""tests/near_tie.py: the same answer up to a flip at a near tie, and nothing looser."""

from __future__ import annotations

import pytest

from tests.near_tie import NEAR_TIE_NATS, TokenStep, assert_same_answer, steps_of_completion

pytestmark = pytest.mark.fast


def _step(token: str, logprob: float, runner_up: str, below: float) -> TokenStep:
    return TokenStep(token, logprob, ((token, logprob), (runner_up, logprob - below)))


DECIDED = [_step(" Paris", -0.1, " Lyon", 4.0), _step(".", -0.2, ",", 3.0)]
TIED = [_step(" Paris", -0.1, " Lyon", 4.0), _step(".", -0.6, ",", 0.3), _step(" It", -1, " A", 2)]


def test_the_same_tokens_are_the_same_answer() -> None:
    assert assert_same_answer(DECIDED, list(DECIDED)) == 2
    assert assert_same_answer(DECIDED, " Paris.") == 2


def test_a_flip_at_a_near_tie_is_the_same_answer_and_the_rest_may_differ() -> None:
    flipped = [TIED[0], _step(",", -0.9, ".", 0.3), _step(" the", -1.0, " a", 3.0)]
    assert assert_same_answer(TIED, flipped) == 1
    assert assert_same_answer(TIED, " Paris, the capital") == 1  # only its text


def test_a_flip_where_the_model_was_decided_fails() -> None:
    flipped = [DECIDED[0], _step(",", -3.2, ".", -3.0)]
    with pytest.raises(AssertionError, match="not the same answer at token 1"):
        assert_same_answer(DECIDED, flipped)
    with pytest.raises(AssertionError, match="not the same answer at token 1"):
        assert_same_answer(DECIDED, " Paris, the capital")


def test_a_mixed_up_sequence_fails() -> None:
    # Another question's answer: its first token is not this answer's runner-up.
    other = [_step(" Blue", -0.5, " Red", 0.2), _step(".", -0.1, "!", 3.0)]
    with pytest.raises(AssertionError, match="at token 0"):
        assert_same_answer(DECIDED, other)
    with pytest.raises(AssertionError, match="at token 0"):
        assert_same_answer(DECIDED, " Blue.")
    # The reference's runner-up, but far below its top: not a tie either.
    with pytest.raises(AssertionError, match="at token 0"):
        assert_same_answer(DECIDED, " Lyon.")
    # The other run's own logprobs must show the tie too (it took " Lyon" by a mile).
    both = [_step(" Paris", -0.4, " Lyon", 0.2)]
    with pytest.raises(AssertionError, match="at token 0"):
        assert_same_answer(both, [_step(" Lyon", -0.01, " Paris", NEAR_TIE_NATS + 1)])


def test_an_answer_that_ends_early_does_so_at_a_near_tie_only() -> None:
    assert assert_same_answer(TIED, TIED[:1]) == 1  # the end was the runner-up of "."
    with pytest.raises(AssertionError, match="one run ended"):
        assert_same_answer(DECIDED, DECIDED[:1])
    with pytest.raises(AssertionError, match="not the same answer"):
        assert_same_answer(DECIDED, " Paris")
    with pytest.raises(AssertionError, match="then"):
        assert_same_answer(DECIDED, " Paris. And more")


def test_llama_cpp_pythons_completion_logprobs_read_as_steps() -> None:
    read = steps_of_completion(
        {
            "tokens": [" Paris", "."],
            "token_logprobs": [-0.1, -0.2],
            "top_logprobs": [{" Lyon": -4.1, " Paris": -0.1}, {".": -0.2, ",": -3.2}],
        }
    )
    assert read == DECIDED


def test_a_text_cut_by_a_stop_string_is_compared_up_to_its_cut() -> None:
    assert assert_same_answer(DECIDED, " Par", cut=True) == 0  # inside the first token
    assert assert_same_answer(DECIDED, " Paris", cut=True) == 1
    with pytest.raises(AssertionError, match="at token 0"):
        assert_same_answer(DECIDED, " Lyo", cut=True)  # not where the answer went


def test_a_three_way_tie_may_leave_the_flip_unlisted_on_one_side() -> None:
    # Seen on Gemma beside three other slots: the other run took a token this run ranked
    # third (unlisted with two candidates), and listed this run's token 0.02 below it.
    three = [TokenStep("蓝", -1.2, (("蓝", -1.2), ("红", -1.3)))]
    took = [TokenStep("Name", -1.15, (("Name", -1.15), ("蓝", -1.17)))]
    assert assert_same_answer(three, took) == 0
    # Unlisted where this run's list ends far below its top: that token was no near tie.
    decided = [TokenStep("蓝", -0.1, (("蓝", -0.1), ("红", -3.5)))]
    with pytest.raises(AssertionError, match="at token 0"):
        assert_same_answer(decided, took)
    # Unlisted on both sides: no side shows the tie.
    blind = [TokenStep("Name", -1.15, (("Name", -1.15), ("绿", -1.16)))]
    with pytest.raises(AssertionError, match="at token 0"):
        assert_same_answer(three, blind)
