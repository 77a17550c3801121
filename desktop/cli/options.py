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
