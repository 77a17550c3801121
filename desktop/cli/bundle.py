"""``edgedesk models bundle`` and ``import-bundle``: signed offline bundles for air gaps."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from desktop.base.errors import InvalidRequest, ModelNotFound
from desktop.base.filebytes import format_bytes
from desktop.catalog import import_bundle, write_bundle
from desktop.cli.arguments import context_for


def register_models(msub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``bundle`` and ``import-bundle`` to ``edgedesk models``."""
    from desktop.cli.options import common_options

    common = common_options()
    b = msub.add_parser(
        "bundle",
        parents=[common],
        help="write installed models and a signed manifest to a folder",
        description="Copy installed models into DIR with a manifest of "
        "SHA-256 digests signed with IT's Ed25519 key, for air-gapped machines.",
    )
    b.add_argument("models", metavar="ID", nargs="+")
    b.add_argument("--out", type=Path, required=True, metavar="DIR")
    b.add_argument(
        "--signing-key",
        type=Path,
        required=True,
        metavar="KEY.pem",
        help="Ed25519 private key (openssl genpkey -algorithm ed25519)",
    )
    b.set_defaults(handler=handle_bundle)
    i = msub.add_parser(
        "import-bundle", parents=[common], help="verify a signed bundle and install its models"
    )
    i.add_argument("folder", type=Path, metavar="DIR")
    i.add_argument(
        "--public-key",
        type=Path,
        required=True,
        metavar="PUB.pem",
        help="IT's Ed25519 public key (openssl pkey -in KEY.pem -pubout)",
    )
    i.set_defaults(handler=handle_import_bundle)


def _read_key(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise InvalidRequest(f"cannot read the {what} {path}: {exc.strerror}") from None


def _progress(name: str, done: int, total: int) -> None:
    if sys.stderr.isatty():
        print(f"\r{name}: {done / max(total, 1):6.1%}", end="", file=sys.stderr, flush=True)


def handle_bundle(args: argparse.Namespace) -> int:
    """Write the bundle."""
    key = _read_key(args.signing_key, "signing key")
    ctx = context_for(args)
    models = []
    for ref in args.models:
        found = ctx.installed.matching(ref)
        if not found:
            raise ModelNotFound(f"{ref} is not installed; pull or import it first")
        models.append(found[0])
    manifest = write_bundle(models, args.out, key, _progress)
    print(f"bundle written: {manifest.parent} ({len(models)} models, signed manifest)")
    return 0


def handle_import_bundle(args: argparse.Namespace) -> int:
    """Verify and install the bundle."""
    key = _read_key(args.public_key, "public key")
    ctx = context_for(args)
    for model in import_bundle(args.folder, key, ctx.installed, _progress):
        print(f"installed {model.id} ({format_bytes(model.size)}, verified)")
    return 0
