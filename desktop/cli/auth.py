"""``edgedesk auth login|logout``: keep the Hugging Face token in the OS keyring only."""

from __future__ import annotations

import argparse
import getpass
import sys

from desktop.base.errors import InvalidRequest
from desktop.catalog import delete_token, save_token


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``auth`` verb group."""
    from desktop.cli.options import common_options

    auth = sub.add_parser(
        "auth", parents=[common_options()], help="Hugging Face token for gated models"
    )
    asub = auth.add_subparsers(dest="auth_verb", metavar="ACTION", required=True)
    login = asub.add_parser(
        "login", parents=[common_options()], help="store a Hub token in the OS keyring"
    )
    login.add_argument(
        "--token-stdin",
        action="store_true",
        help="read the token from standard input (for scripts)",
    )
    login.set_defaults(handler=handle_login)
    logout = asub.add_parser(
        "logout", parents=[common_options()], help="delete the stored Hub token"
    )
    logout.set_defaults(handler=handle_logout)


def handle_login(args: argparse.Namespace) -> int:
    """Read the token (never echoed, never logged) and store it in the keyring."""
    if args.token_stdin:
        token = sys.stdin.readline().strip()
    else:
        token = getpass.getpass("Hugging Face token (input hidden): ").strip()
    if not token or any(c.isspace() for c in token):
        raise InvalidRequest(
            "that is not a token; create one at https://huggingface.co/settings/tokens"
        )
    save_token(token)
    print("token stored in the OS keyring; gated models you have access to can be pulled")
    return 0


def handle_logout(args: argparse.Namespace) -> int:
    """Remove the stored token."""
    removed = delete_token()
    print("token removed" if removed else "no token was stored")
    return 0
