"""Argument helpers for the verbs; ``context_for`` is ``desktop.root.startup``'s (window too)."""

from __future__ import annotations

import argparse

from desktop.root.startup import context_for

__all__ = ["context_for", "text_arg"]


def text_arg(value: str) -> str:
    """An argparse type for words, names and prompts: text, not a file name's raw bytes.

    A shell passes any bytes; ones that are not UTF-8 arrive as lone surrogates that no
    database, model or terminal accepts (file and folder arguments keep them).
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise argparse.ArgumentTypeError(
            "holds bytes that are not UTF-8 text; check the terminal's encoding"
        ) from None
    return value
