"""What "the same answer" means when llama.cpp computes it twice: the one helper.

llama.cpp does not promise bit-equal logits for the same tokens decoded in batches of
other shapes (beside other slots, with prompt-lookup guesses, after a cache hit that
leaves one token to decode instead of the whole prompt), on other instruction sets
(AVX2, AVX-512, AMX) or in another process with another batch plan: "we use different
kernels for different batch sizes" (ggml-org/llama.cpp#23335). Measured on Gemma 3 270M
(docs/benchmarks.md): the same tokens decoded one by one and as one batch gave logits up
to 1.2-1.9 apart, the top token's by up to 0.5-0.94.

So two greedy answers to the same request are the same answer when they agree token
for token up to their first difference, and at that token the model's two best
candidates were a near tie: the token the other run took is the runner-up of this run's
step, less than ``NEAR_TIE_NATS`` below the top (and, where the other run has logprobs
too, the same holds the other way round). After a legitimate flip the continuations may
differ. A sequence mixed up with another answer fails: its first token is no near tie.

Ask for logprobs (``logprobs=2`` or more: the runner-up must be listed) on at least the
reference side. docs/testing.md gives the rule for new tests.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

# Two candidates closer than this may swap places under another batch shape or CPU: the
# top token's logit moved by up to 0.94 between shapes, so two logits moving opposite
# ways part by up to about twice that; 1 nat (the runner-up at least 37% as likely as the
# top) covers the flips seen on real CPUs (0.13 and 0.18 nats, #22) with room, and is
# far below the margin of a decided token (Gemma's are mostly 3+ nats).
NEAR_TIE_NATS = 1.0


@dataclass(frozen=True)
class TokenStep:
    """One generated token: its text, its logprob and the best candidates at that step."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


def steps(logprobs: Iterable[Any]) -> list[TokenStep]:
    """Steps from the engine's ``TokenLogprob``s or an OpenAI client's chat ``logprobs.content``."""
    out = []
    for entry in logprobs:
        if hasattr(entry, "top_logprobs"):  # openai.types.chat.ChatCompletionTokenLogprob
            top = tuple((t.token, t.logprob) for t in entry.top_logprobs or ())
        else:  # desktop.engine._types.TokenLogprob
            top = tuple(entry.top)
        out.append(TokenStep(entry.token, entry.logprob, top))
    return out


def steps_of_completion(logprobs: Any) -> list[TokenStep]:
    """Steps from a legacy completion's ``logprobs`` (llama-cpp-python's dict or OpenAI's)."""
    get = logprobs.get if isinstance(logprobs, dict) else lambda k: getattr(logprobs, k)
    return [
        TokenStep(token, logprob, tuple(sorted((top or {}).items(), key=lambda kv: -kv[1])))
        for token, logprob, top in zip(
            get("tokens"), get("token_logprobs"), get("top_logprobs"), strict=True
        )
    ]


def _gap(step: TokenStep, other_token: str) -> float | None:
    """How far ``other_token`` was below this step's choice (None: not among its best)."""
    for token, logprob in step.top:
        if token == other_token:
            return step.logprob - logprob
    return None


def _runner_up_gap(step: TokenStep) -> float | None:
    below = [logprob for token, logprob in step.top if token != step.token]
    return step.logprob - max(below) if below else None


def _near(gap: float | None) -> bool:
    return gap is not None and gap < NEAR_TIE_NATS


def _unlisted_may_be_near(step: TokenStep) -> bool:
    """Whether a token missing from ``step``'s listed candidates may still be within the
    near-tie line: the list ends above it (a three-way tie with only two listed)."""
    return bool(step.top) and step.logprob - min(p for _t, p in step.top) < NEAR_TIE_NATS


def _flip_is_near(mine: TokenStep, theirs: TokenStep) -> tuple[bool, str]:
    """Whether ``mine`` and ``theirs`` (another run's step at the same place) took
    different tokens at a near tie, judged from every side that has logprobs; and why."""
    sides = [(mine, theirs.token)] + ([(theirs, mine.token)] if theirs.top else [])
    gaps = [_gap(step, token) for step, token in sides]
    listed = [g for g in gaps if g is not None]
    # At least one side lists the other's token near its top, no side lists it far, and a
    # side that does not list it may only be one whose list ends inside the near-tie line.
    near = bool(listed) and all(_near(g) for g in listed)
    near = near and all(
        g is not None or _unlisted_may_be_near(s) for g, (s, _t) in zip(gaps, sides, strict=True)
    )
    return near, f"{mine.token!r} became {theirs.token!r}, no near tie {tuple(gaps)}"


def assert_same_answer(
    reference: Sequence[TokenStep],
    other: Sequence[TokenStep] | str,
    what: str = "",
    cut: bool = False,
) -> int:
    """Fail unless ``other`` is ``reference``'s answer up to a flip at a near tie.

    ``other`` is another run's steps, or only its text (a process that prints no
    logprobs: its tokens are read off the reference's); ``cut``: that text was cut short
    on purpose (a stop string), so where it ends says nothing. Returns how many tokens
    agreed before the first difference (all of them when there is none).
    """
    if isinstance(other, str):
        return _same_text(reference, other, what, cut)
    for index, (mine, theirs) in enumerate(zip(reference, other, strict=False)):
        if mine.token == theirs.token:
            continue
        near, why = _flip_is_near(mine, theirs)
        assert near, _say(what, index, why, reference)
        return index
    if len(reference) != len(other):  # one ended where the other went on: its end (not a
        # token with a text) must have been the runner-up of the longer one's next step
        agreed = min(len(reference), len(other))
        longer = reference if len(reference) > agreed else other
        assert isinstance(longer, Sequence) and not isinstance(longer, str)
        gap = _runner_up_gap(longer[agreed])
        assert _near(gap), _say(what, agreed, f"one run ended, no near tie ({gap})", reference)
        return agreed
    return len(reference)


def _same_text(reference: Sequence[TokenStep], text: str, what: str, cut: bool) -> int:
    at = 0
    for index, step in enumerate(reference):
        if text.startswith(step.token, at):
            at += len(step.token)
            continue
        rest = text[at:]
        if cut and step.token.startswith(rest):  # cut here, inside or before this token
            return index
        if not rest:  # the other run ended here: its end must have been the runner-up
            gap = _runner_up_gap(step)
        else:
            gaps = [
                step.logprob - p
                for t, p in step.top
                if t and t != step.token and rest.startswith(t)
            ]
            gap = min(gaps, default=None)
        assert _near(gap), _say(
            what, index, f"{step.token!r} became {rest[:30]!r} ({gap})", reference
        )
        return index
    assert at == len(text), _say(what, len(reference), f"then {text[at:][:30]!r}", reference)
    return len(reference)


def _say(what: str, index: int, problem: str, reference: Sequence[TokenStep]) -> str:
    agreed = "".join(s.token for s in reference[:index])
    return f"{what}: not the same answer at token {index} (after {agreed!r}): {problem}"
