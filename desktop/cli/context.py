"""Build the app context for a CLI invocation from its flags."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from desktop.app import AppContext, build_context


def context_for(args: argparse.Namespace, extra: Mapping[str, Any] | None = None) -> AppContext:
    """The composition root, with this invocation's flags applied as settings."""
    from desktop.cli import cli_settings

    return build_context(cli_settings={**cli_settings(args), **(extra or {})})
