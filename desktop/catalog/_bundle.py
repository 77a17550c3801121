"""Offline model bundles for air-gapped machines: files + a signed manifest.

IT runs ``edgedesk models bundle`` on a connected machine with its Ed25519 signing key;
the folder travels on removable media; ``edgedesk models import-bundle`` on the
air-gapped machine checks the manifest's signature with IT's public key and every
file's size and SHA-256 *while copying*, before anything is registered.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import load_pem_private_key, load_pem_public_key

from desktop.base.errors import InvalidRequest, ModelFileError
from desktop.catalog._installed import InstalledIndex, InstalledModel

MANIFEST = "manifest.json"
SIGNATURE = "manifest.sig"
FORMAT = 1
Progress = Callable[[str, int, int], None]  # file name, bytes done, bytes total


@dataclass(frozen=True)
class BundledFile:
    """One file in a bundle, relative to the bundle folder."""

    path: str
    size: int
    sha256: str


@dataclass(frozen=True)
class BundledModel:
    """One model in a bundle."""

    id: str
    repo: str | None
    revision: str | None
    catalog_id: str | None
    quant: str | None
    files: tuple[BundledFile, ...]


def _private_key(pem: bytes) -> Ed25519PrivateKey:
    try:
        key = load_pem_private_key(pem, password=None)
    except (ValueError, TypeError) as exc:
        raise InvalidRequest(f"the signing key is not a readable PEM private key ({exc})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise InvalidRequest(
            "the signing key must be an Ed25519 key "
            "(openssl genpkey -algorithm ed25519 -out bundle-key.pem)"
        )
    return key


def _public_key(pem: bytes) -> Ed25519PublicKey:
    try:
        key = load_pem_public_key(pem)
    except (ValueError, TypeError) as exc:
        raise InvalidRequest(f"the public key is not a readable PEM public key ({exc})") from None
    if not isinstance(key, Ed25519PublicKey):
        raise InvalidRequest("the public key must be an Ed25519 key")
    return key


def _copy_hashing(source: Path, target: Path, progress: Progress | None, label: str) -> str:
    digest = hashlib.sha256()
    total = source.stat().st_size
    done = 0
    tmp = target.with_name(target.name + ".part")
    target.parent.mkdir(parents=True, exist_ok=True)
    with source.open("rb") as src, tmp.open("wb") as dst:
        for block in iter(lambda: src.read(4 * 1024 * 1024), b""):
            digest.update(block)
            dst.write(block)
            done += len(block)
            if progress:
                progress(label, done, total)
        dst.flush()
        os.fsync(dst.fileno())
    os.replace(tmp, target)
    return digest.hexdigest()


def write_bundle(
    models: Sequence[InstalledModel],
    out: Path,
    signing_key_pem: bytes,
    progress: Progress | None = None,
) -> Path:
    """Copy ``models`` into ``out`` with a manifest signed by ``signing_key_pem``."""
    key = _private_key(signing_key_pem)
    if not models:
        raise InvalidRequest("name at least one installed model to bundle")
    out.mkdir(parents=True, exist_ok=True)
    # Any: the manifest's JSON entries (text, numbers, lists of files)
    entries: list[dict[str, Any]] = []
    for model in models:
        files = []
        for path, expected in zip(model.paths, model.sha256, strict=True):
            relative = f"models/{model.id}/{path.name}"
            digest = _copy_hashing(path, out / relative, progress, path.name)
            if digest != expected:
                raise ModelFileError(
                    f"{path} changed since it was installed (SHA-256 "
                    f"{digest[:12]}… ≠ {expected[:12]}…); pull it again"
                )
            files.append({"path": relative, "size": path.stat().st_size, "sha256": digest})
        entries.append(
            {
                "id": model.id,
                "repo": model.repo,
                "revision": model.revision,
                "catalog_id": model.catalog_id,
                "quant": model.quant,
                "files": files,
            }
        )
    manifest = json.dumps(
        {"format": FORMAT, "created": int(time.time()), "models": entries}, indent=2, sort_keys=True
    ).encode()
    (out / MANIFEST).write_bytes(manifest)
    (out / SIGNATURE).write_text(key.sign(manifest).hex() + "\n", encoding="ascii")
    return out / MANIFEST


def verify_manifest(folder: Path, public_key_pem: bytes) -> list[BundledModel]:
    """The bundle's models, after checking the manifest's signature (files not yet read)."""
    try:
        manifest = (folder / MANIFEST).read_bytes()
        signature = bytes.fromhex((folder / SIGNATURE).read_text(encoding="ascii").strip())
    except FileNotFoundError as exc:
        raise ModelFileError(
            f"{folder} is not a complete bundle: {exc.filename} is missing"
        ) from None
    except ValueError:
        raise ModelFileError(f"{folder / SIGNATURE} is not a valid signature file") from None
    try:
        _public_key(public_key_pem).verify(signature, manifest)
    except InvalidSignature:
        raise ModelFileError(
            f"the bundle in {folder} is not signed by this key or was "
            "modified after signing; refusing to import it"
        ) from None
    data = json.loads(manifest)
    if data.get("format") != FORMAT:
        raise ModelFileError(f"bundle format {data.get('format')} is not supported")
    return [
        BundledModel(
            m["id"],
            m.get("repo"),
            m.get("revision"),
            m.get("catalog_id"),
            m.get("quant"),
            tuple(BundledFile(**f) for f in m["files"]),
        )
        for m in data["models"]
    ]


def import_bundle(
    folder: Path, public_key_pem: bytes, index: InstalledIndex, progress: Progress | None = None
) -> list[InstalledModel]:
    """Verify and install every model of the bundle; a bad file installs nothing of it."""
    models = verify_manifest(folder, public_key_pem)
    installed: list[InstalledModel] = []
    for model in models:
        target_dir = index.models_dir / (model.repo or "bundles") / model.id
        copied: list[Path] = []
        try:
            for item in model.files:
                source = (folder / item.path).resolve()
                if folder.resolve() not in source.parents:
                    raise ModelFileError(f"bundle path {item.path} points outside the bundle")
                if not source.is_file() or source.stat().st_size != item.size:
                    raise ModelFileError(f"{item.path} is missing or has the wrong size")
                target = target_dir / Path(item.path).name
                digest = _copy_hashing(source, target, progress, target.name)
                copied.append(target)
                if digest != item.sha256:
                    raise ModelFileError(
                        f"{item.path} does not match the signed manifest "
                        "(SHA-256 differs); the bundle was tampered with or "
                        "damaged in transit"
                    )
        except ModelFileError:
            for path in copied:
                path.unlink(missing_ok=True)
            shutil.rmtree(target_dir, ignore_errors=True) if target_dir.exists() and not any(
                target_dir.iterdir()
            ) else None
            raise
        installed.append(
            index.add(
                InstalledModel(
                    id=model.id,
                    files=tuple(str(p) for p in copied),
                    size=sum(f.size for f in model.files),
                    sha256=tuple(f.sha256 for f in model.files),
                    source="bundle",
                    repo=model.repo,
                    revision=model.revision,
                    catalog_id=model.catalog_id,
                    quant=model.quant,
                    managed=True,
                )
            )
        )
    return installed
