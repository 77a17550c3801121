"""Build the app context for a CLI invocation from its flags."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import Any

from desktop.app import AppContext, build_context


def context_for(args: argparse.Namespace, extra: Mapping[str, Any] | None = None) -> AppContext:
    """The composition root, with this invocation's flags applied as settings."""
    from desktop.cli import cli_settings

    ctx = build_context(cli_settings={**cli_settings(args), **(extra or {})})
    if ctx.policy_problem:
        print(f"edgedesk: warning: {ctx.policy_problem}", file=sys.stderr)
    return ctx
