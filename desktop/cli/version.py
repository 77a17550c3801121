"""``edgedesk --version``: the app version and the llama.cpp backend this build uses.

Loading llama.cpp here is deliberate: in a frozen installer the smoke test runs
``--version``, so it proves the bundled native libraries load.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from desktop import __version__


class VersionAction(argparse.Action):
    """Print version and backend (plus a CPU-fallback notice), then exit 0."""

    def __init__(
        self,
        option_strings: Sequence[str],
        dest: str = argparse.SUPPRESS,
        default: Any = argparse.SUPPRESS,
        help: str | None = None,
    ) -> None:
        super().__init__(
            option_strings,
            dest=dest,
            default=default,
            nargs=0,
            help=help or "show the version and the llama.cpp backend, then exit",
        )

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        from desktop.engine import backend_info

        info = backend_info()
        print(f"edgedesk {__version__}\nbackend: {info.describe()}")
        if info.notice:
            print(info.notice, file=sys.stderr)
        parser.exit(0)
