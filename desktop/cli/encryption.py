"""``edgedesk data encrypt|decrypt|export-key|import-key`` and ``edgedesk unlock``.

What is encrypted and where the key lives: ``desktop.store._atrest`` and docs/privacy.md.
Exit code 11 means the database is encrypted and its key is missing or wrong.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from desktop.base.config import user_path
from desktop.base.crash import shown
from desktop.base.errors import ConfigError, InvalidRequest
from desktop.base.private import private_file
from desktop.cli.arguments import context_for

if TYPE_CHECKING:
    from desktop.store import AtRest


def add_data_actions(dsub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the encryption actions to ``edgedesk data``."""
    from desktop.cli.options import common_options

    encrypt = dsub.add_parser(
        "encrypt",
        parents=[common_options()],
        help="encrypt conversations and document indexes in place",
    )
    encrypt.add_argument(
        "--passphrase",
        action="store_true",
        help="use a passphrase (asked now) instead of a key in the OS keyring",
    )
    encrypt.add_argument(
        "--passphrase-stdin",
        action="store_true",
        help="read the passphrase from the first line of stdin",
    )
    encrypt.set_defaults(handler=handle_encrypt)
    decrypt = dsub.add_parser(
        "decrypt",
        parents=[common_options()],
        help="turn encryption off again (the database becomes plaintext)",
    )
    decrypt.set_defaults(handler=handle_decrypt)
    export = dsub.add_parser(
        "export-key",
        parents=[common_options()],
        help="write the database key to FILE, or print it as a recovery code (--code)",
    )
    export.add_argument("file", metavar="FILE", nargs="?")
    export.add_argument(
        "--code",
        action="store_true",
        help="print a recovery code to write down instead (import-key --code takes it)",
    )
    export.set_defaults(handler=handle_export_key)
    imp = dsub.add_parser(
        "import-key",
        parents=[common_options()],
        help="put a key from 'export-key' (FILE, or a recovery code) back into the OS keyring",
    )
    imp.add_argument("file", metavar="FILE", nargs="?")
    imp.add_argument(
        "--code",
        action="store_true",
        help="type the recovery code (or give it on the first line of stdin)",
    )
    imp.set_defaults(handler=handle_import_key)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``unlock`` verb."""
    from desktop.cli.options import common_options

    unlock = sub.add_parser(
        "unlock",
        parents=[common_options()],
        help="ask the database passphrase once, then run COMMAND (default: serve)",
    )
    unlock.add_argument(
        "--passphrase-stdin",
        action="store_true",
        help="read the passphrase from the first line of stdin",
    )
    unlock.add_argument("rest", nargs=argparse.REMAINDER, metavar="COMMAND")
    verbs = sub.choices  # every verb, filled in as they register (not imported: no cycle)
    unlock.set_defaults(handler=lambda args: handle_unlock(args, verbs))


def read_passphrase(from_stdin: bool, prompt: str = "Database passphrase: ") -> str:
    """A passphrase from the terminal (not echoed) or the first line of stdin."""
    if from_stdin or not sys.stdin.isatty():
        value = sys.stdin.readline().rstrip("\r\n")
    else:
        value = getpass.getpass(prompt)
    if not value:
        raise InvalidRequest("no passphrase was given")
    return value


def _step(name: str) -> None:
    labels = {
        "exported": "copied into a new file",
        "verified": "the copy checked row for row",
        "renamed": "the new file took the old one's place",
    }
    if name in labels:
        print(f"  {labels[name]}", file=sys.stderr, flush=True)


def _interactive() -> bool:
    """Whether a person answers at a terminal (not a script's pipe)."""
    return sys.stdin.isatty() and sys.stdout.isatty()


def _ask(prompt: str) -> str:
    sys.stderr.write(prompt)
    sys.stderr.flush()
    return sys.stdin.readline().strip()


def _write_key_file(target: Path, text: str) -> None:
    """Write an exported key to ``target``, owner-only; ConfigError if it cannot be."""
    try:
        private_file(target)
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write {shown(target)}: {exc}") from None


def _print_code(code: str) -> None:
    print(f"recovery code: {code}")
    print(
        "write it down and keep it off this machine; 'edgedesk data import-key --code' "
        "takes it back if the OS keyring loses the key",
        file=sys.stderr,
    )


def offer_backup(at_rest: AtRest) -> None:
    """Offer the new keyring key's backup once, at a terminal (a script gets a hint line)."""
    if not at_rest.backup_due():
        return
    if not _interactive():
        print("keep a copy of the key: edgedesk data export-key FILE (or --code)")
        return
    at_rest.backup_offered()  # asked once: whatever the answer, not asked again
    print(
        "The key is kept in this user's OS keyring only. If that entry is lost (a new user "
        "profile, a reset keyring), only a backup of the key opens your data again.",
        file=sys.stderr,
    )
    answer = _ask(
        "Back up the key now? [c] show a recovery code to write down, [f] save it to a "
        "file, [Enter] not now: "
    ).lower()
    if answer.startswith("c"):
        _print_code(at_rest.recovery_code())
    elif answer.startswith("f"):
        name = _ask("File to save the key in (keep it off this machine): ")
        if not name:
            print("not saved; later: edgedesk data export-key FILE", file=sys.stderr)
            return
        target = user_path(name)
        _write_key_file(target, at_rest.export_key())
        print(f"key written to {target}")
    else:
        print("later: edgedesk data export-key FILE (or --code)", file=sys.stderr)


def handle_encrypt(args: argparse.Namespace) -> int:
    """Encrypt the database in place (resuming an interrupted switch first)."""
    ctx = context_for(args)
    try:
        status = ctx.at_rest.status()
        if status["encrypted"] and not status["converting"]:
            # Idempotent, for IT scripts that make sure encryption is on: exit 0.
            print(
                f"already encrypted: {status['database']} ({status['cipher']}, key in the "
                f"{status['key_source']}); nothing was changed"
            )
            return 0
        passphrase = None
        if args.passphrase or args.passphrase_stdin:
            passphrase = read_passphrase(args.passphrase_stdin, "New database passphrase: ")
            if (
                not args.passphrase_stdin
                and sys.stdin.isatty()
                and getpass.getpass("Again: ") != passphrase
            ):
                raise InvalidRequest("the two passphrases differ; nothing was changed")
        with ctx.data_alone():
            ctx.at_rest.encrypt(passphrase=passphrase, step=_step)
            # What the prompt cache saved in the clear before goes (docs/privacy.md).
            ctx.forget_saved_conversations()
        status = ctx.at_rest.status()
        print(
            f"encrypted: {status['database']} ({status['cipher']}, "
            f"key in the {status['key_source']})",
            flush=True,
        )
        offer_backup(ctx.at_rest)
    finally:
        ctx.close()
    return 0


def handle_decrypt(args: argparse.Namespace) -> int:
    """Turn encryption off (refused when the policy requires it)."""
    ctx = context_for(args)
    try:
        if ctx.settings.encrypt_at_rest is True:
            raise ConfigError(
                "your organization requires encrypted data (policy "
                "EncryptAtRest); nothing was changed"
            )
        with ctx.data_alone():
            ctx.at_rest.decrypt(step=_step)
            ctx.forget_saved_conversations()  # sealed under a key now forgotten
    finally:
        ctx.close()
    print(f"decrypted: {ctx.paths.database} is plaintext again")
    return 0


def handle_export_key(args: argparse.Namespace) -> int:
    """Write the key to FILE, owner-only; to stdout only as a recovery code asked for."""
    if (args.file is None) == (not args.code):
        raise InvalidRequest("give FILE to write the key to, or --code for a recovery code")
    ctx = context_for(args)
    try:
        if args.code:
            _print_code(ctx.at_rest.recovery_code())
            ctx.at_rest.backup_offered()
            return 0
        text = ctx.at_rest.export_key()
        ctx.at_rest.backup_offered()
    finally:
        ctx.close()
    target = user_path(args.file)
    _write_key_file(target, text)
    print(
        f"key written to {target}; anyone with this file and your data can read it: "
        "keep it off this machine (a password manager, a USB key in a drawer)"
    )
    return 0


def handle_import_key(args: argparse.Namespace) -> int:
    """Check the key (a file, or a recovery code) against the database; put it in the keyring."""
    if (args.file is None) == (not args.code):
        raise InvalidRequest(
            "give FILE (from 'edgedesk data export-key'), or --code to type a recovery code"
        )
    ctx = context_for(args)
    try:
        if args.code:
            text = _ask("Recovery code: ") if sys.stdin.isatty() else sys.stdin.readline()
        else:
            try:
                text = user_path(args.file).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise InvalidRequest(f"cannot read {shown(args.file)}: {exc}") from None
        ctx.at_rest.import_key(text)
    finally:
        ctx.close()
    print("key restored to the OS keyring; EdgeDesk opens your data again")
    return 0


def handle_unlock(args: argparse.Namespace, verbs: Mapping[str, argparse.ArgumentParser]) -> int:
    """Ask the passphrase once, check it, then run the rest of the line with it in memory."""
    rest = [a for a in args.rest if a != "--"] or ["serve"]
    if rest[0] not in verbs or rest[0] == "unlock":
        raise InvalidRequest(f"'{shown(rest[0])}' is not a command 'unlock' can run")
    passphrase = read_passphrase(args.passphrase_stdin)
    inner = verbs[rest[0]].parse_args(rest[1:])
    inner.unlocked_passphrase = passphrase
    ctx = context_for(inner)
    try:
        key = ctx.database_key  # KeyRejected (exit 11) for a wrong passphrase
        if key is None or not key.passphrase:
            raise InvalidRequest(
                "the database is not encrypted with a passphrase; run the command without 'unlock'"
            )
        from desktop.store import connect

        connect(ctx.paths.database, key).close()
    finally:
        ctx.close()
        if ctx.data_lock is not None:
            ctx.data_lock.release()  # the command below takes the data folder itself
    return int(inner.handler(inner))
