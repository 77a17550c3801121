"""Flags every verb shares (the settings they override: ``startup.flag_settings``).

Their own module: the verbs import it, and the package's ``__init__`` imports the verbs.
"""

from __future__ import annotations

import argparse


def common_options() -> argparse.ArgumentParser:
    """Flags every verb accepts (``--offline``)."""
    parent = argparse.ArgumentParser(add_help=False)
    # SUPPRESS, not None: a verb's parser would otherwise reset a global --offline given
    # before the verb (argparse copies sub-parser defaults over the parent's values).
    parent.add_argument("--offline", action="store_true", default=argparse.SUPPRESS,
                        help="make no network connection at all (same as EDGEDESK_OFFLINE=1)")
    return parent
