"""Flags every verb shares (the settings they override: ``startup.flag_settings``).

Their own module: the verbs import it, and the package's ``__init__`` imports the verbs.
"""

from __future__ import annotations

import argparse

from desktop.base.errors import InvalidRequest


def common_options() -> argparse.ArgumentParser:
    """Flags every verb accepts (``--offline``)."""
    parent = argparse.ArgumentParser(add_help=False)
    # SUPPRESS, not None: a verb's parser would otherwise reset a global --offline given
    # before the verb (argparse copies sub-parser defaults over the parent's values).
    parent.add_argument(
        "--offline",
        action="store_true",
        default=argparse.SUPPRESS,
        help="make no network connection at all (same as EDGEDESK_OFFLINE=1)",
    )
    return parent


def sampling_options(parser: argparse.ArgumentParser, max_tokens: int, temperature: float) -> None:
    """Add ``--max-tokens N`` and ``--temperature T`` with this verb's defaults."""
    parser.add_argument("--max-tokens", type=int, default=max_tokens, metavar="N")
    parser.add_argument("--temperature", type=float, default=temperature, metavar="T")


def check_sampling(args: argparse.Namespace) -> None:
    """InvalidRequest (exit 2) unless ``--max-tokens`` and ``--temperature`` are usable."""
    if args.max_tokens < 1:
        raise InvalidRequest("--max-tokens must be at least 1")
    if not 0.0 <= args.temperature <= 5.0:
        raise InvalidRequest("--temperature must be between 0 and 5")


def moe_options() -> argparse.ArgumentParser:
    """``--cpu-moe`` and ``--n-cpu-moe N``: where a mixture-of-experts model's routed
    experts go, with llama-server's names (they override ``engine.cpu_moe``)."""
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_mutually_exclusive_group()
    group.add_argument(
        "--cpu-moe",
        action="store_true",
        help="keep every routed expert of a mixture-of-experts model in RAM, the rest "
        "on the GPU (as llama-server --cpu-moe)",
    )
    group.add_argument(
        "--n-cpu-moe",
        type=_layer_count,
        default=None,
        metavar="N",
        help="keep the routed experts of the first N layers in RAM (as llama-server)",
    )
    return parent


def _layer_count(text: str) -> int:
    """An argparse type for a number of layers: a whole number, 0 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 0 <= value <= 10_000:
        raise argparse.ArgumentTypeError("must be between 0 and 10000")
    return value


def moe_settings(args: argparse.Namespace) -> dict[str, object]:
    """The ``engine.cpu_moe`` setting ``--cpu-moe`` / ``--n-cpu-moe N`` ask for ({}: none)."""
    count = getattr(args, "n_cpu_moe", None)
    if count is not None:
        return {"engine.cpu_moe": count}
    return {"engine.cpu_moe": "all"} if getattr(args, "cpu_moe", False) else {}


_UNITS = {"": 1024**3, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}


def memory_size(text: str) -> int:
    """An argparse type for an amount of memory: ``8``, ``8G``, ``8GB``, ``8GiB``,
    ``7.5g``, ``8192M`` (binary units, as memory is sold: an 8 GB GPU has 8 GiB; a bare
    number is GiB)."""
    value = text.strip().lower().removesuffix("ib").removesuffix("b")
    unit = value[-1:] if value[-1:] in _UNITS else ""
    number = value[: len(value) - len(unit)].strip()
    try:
        amount = float(number)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an amount of memory; write e.g. 8G, 16GB or 8192M"
        ) from None
    if not 0 <= amount < 1e6:  # NaN fails every comparison
        raise argparse.ArgumentTypeError(f"{text!r} is out of range")
    return int(amount * _UNITS[unit])
