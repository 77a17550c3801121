"""A chat's sampling parameters: their limits, their stored form, the request they make.

The window's parameters panel, the chat store (``conversations.parameters``) and the
presets share these: every value is checked against ``LIMITS`` on the way in, so a
hand-edited preset or an imported chat cannot put a value in front of the engine that a
spin box would not have let through.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from desktop.engine import GenerationParams


@dataclass(frozen=True)
class Limit:
    """The values one parameter may take, and its default."""

    low: float
    high: float
    default: float | int | None
    whole: bool = False  # an integer (max tokens, top-k, seed)


_LLAMA_CPP = GenerationParams()  # the engine's defaults, llama.cpp's own


@dataclass(frozen=True)
class Sampling:
    """How a chat's answers are sampled (what the parameters panel edits).

    Top-p, top-k, min-p and the repeat penalty start at llama.cpp's defaults; for a chat
    the temperature starts a little lower and the answer may run longer.
    """

    temperature: float = 0.7
    max_tokens: int = 1024
    top_p: float = _LLAMA_CPP.top_p
    top_k: int = _LLAMA_CPP.top_k
    min_p: float = _LLAMA_CPP.min_p
    repeat_penalty: float = _LLAMA_CPP.repeat_penalty
    seed: int | None = None  # None: a new random seed for each answer
    context_length: int | None = None  # None: the context fitted to this machine
    # A mixture-of-experts model's routed experts (``engine.cpu_moe`` for this chat's
    # model): None: the setting (auto by default); "all": every one in RAM; "none": on
    # the GPU with their layers; N: those of the first N layers in RAM.
    cpu_moe: str | int | None = None

    # Any: every field by name, spread back as Sampling(**...) in from_dict
    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values, as the store, the presets and the exports keep them."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, base: Sampling | None = None) -> Sampling:
        """The values of ``data`` that are valid, the rest from ``base`` (or defaults).

        A value of the wrong kind or out of its range is left out, never clamped into a
        different one silently; unknown keys are ignored (a newer version's).
        """
        out = (base or cls()).to_dict()
        for name, value in (data or {}).items():
            if name in LIMITS and valid(name, value):
                out[name] = (
                    value
                    if value is None or isinstance(value, str)
                    else (int(value) if LIMITS[name].whole else float(value))
                )
        return cls(**out)

    def generation_params(self) -> GenerationParams:
        """The request these settings make of the engine."""
        return GenerationParams(
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            top_p=self.top_p,
            top_k=self.top_k,
            min_p=self.min_p,
            repeat_penalty=self.repeat_penalty,
            seed=self.seed,
            context_length=self.context_length,
            cpu_moe=self.cpu_moe,
        )


_DEFAULT = Sampling()

# Each default is Sampling's; top-k 0 turns it off; no seed means a random one.
LIMITS: dict[str, Limit] = {
    "temperature": Limit(0.0, 2.0, _DEFAULT.temperature),
    "max_tokens": Limit(1, 131_072, _DEFAULT.max_tokens, whole=True),
    "top_p": Limit(0.0, 1.0, _DEFAULT.top_p),
    "top_k": Limit(0, 1000, _DEFAULT.top_k, whole=True),
    "min_p": Limit(0.0, 1.0, _DEFAULT.min_p),
    "repeat_penalty": Limit(0.5, 2.0, _DEFAULT.repeat_penalty),
    "seed": Limit(0, 2**31 - 1, _DEFAULT.seed, whole=True),
    # The context the model is loaded with for this chat (None: fitted to the machine);
    # the resolver's own bounds are 64 to 1M tokens, a chat's start at 256.
    "context_length": Limit(256, 1_048_576, _DEFAULT.context_length, whole=True),
    # Layers whose experts stay in RAM (engine.cpu_moe's bounds); or one of EXPERT_WORDS.
    "cpu_moe": Limit(0, 10_000, None, whole=True),
}
EXPERT_WORDS = ("all", "none")  # cpu_moe's words besides a number (None: the setting)


def valid(name: str, value: object) -> bool:
    """Whether ``value`` is one parameter ``name`` may take (a seed may be None)."""
    limit = LIMITS.get(name)
    if limit is None:
        return False
    if value is None:
        return limit.default is None
    if isinstance(value, str):
        return name == "cpu_moe" and value in EXPERT_WORDS
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    if limit.whole and not (isinstance(value, int) or float(value).is_integer()):
        return False
    return limit.low <= value <= limit.high
