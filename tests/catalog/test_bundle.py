"""Offline bundles: round trip, and every kind of tampering is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
)

from desktop.cli import main

pytestmark = pytest.mark.fast


@pytest.fixture
def keys(tmp_path: Path) -> tuple[Path, Path]:
    key = Ed25519PrivateKey.generate()
    private = tmp_path / "it-key.pem"
    public = tmp_path / "it-key.pub.pem"
    private.write_bytes(key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()))
    public.write_bytes(
        key.public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)
    )
    return private, public


def _bundle(
    tmp_path: Path, tiny_chat: Path, keys: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Import the tiny model on the 'connected' machine and bundle it."""
    monkeypatch.setenv("EDGEDESK_HOME", str(tmp_path / "connected"))
    assert main(["models", "import", str(tiny_chat)]) == 0
    out = tmp_path / "usb" / "bundle"
    assert (
        main(["models", "bundle", "tiny-chat", "--out", str(out), "--signing-key", str(keys[0])])
        == 0
    )
    monkeypatch.setenv("EDGEDESK_HOME", str(tmp_path / "airgapped"))
    return out


def test_round_trip_installs_verified_model_that_runs(
    tmp_path, tiny_chat, keys, monkeypatch, capsys
) -> None:
    bundle = _bundle(tmp_path, tiny_chat, keys, monkeypatch)
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert manifest["models"][0]["files"][0]["size"] == tiny_chat.stat().st_size
    assert main(["models", "import-bundle", str(bundle), "--public-key", str(keys[1])]) == 0
    assert "installed tiny-chat" in capsys.readouterr().out
    assert main(["run", "tiny-chat", "hi", "--max-tokens", "3"]) == 0
    installed = list((tmp_path / "airgapped" / "data" / "models").rglob("*.gguf"))
    assert len(installed) == 1 and installed[0].read_bytes() == tiny_chat.read_bytes()


def test_modified_model_file_is_refused_and_nothing_installed(
    tmp_path, tiny_chat, keys, monkeypatch, capsys
) -> None:
    bundle = _bundle(tmp_path, tiny_chat, keys, monkeypatch)
    model_file = next((bundle / "models").rglob("*.gguf"))
    data = bytearray(model_file.read_bytes())
    data[-10] ^= 0xFF
    model_file.write_bytes(bytes(data))
    assert main(["models", "import-bundle", str(bundle), "--public-key", str(keys[1])]) == 3
    assert "does not match the signed manifest" in capsys.readouterr().err
    assert not list((tmp_path / "airgapped" / "data" / "models").rglob("*.gguf"))
    assert main(["run", "tiny-chat", "hi"]) == 3  # not installed


def test_edited_manifest_or_foreign_key_is_refused(
    tmp_path, tiny_chat, keys, monkeypatch, capsys
) -> None:
    bundle = _bundle(tmp_path, tiny_chat, keys, monkeypatch)
    other = (
        Ed25519PrivateKey.generate()
        .public_key()
        .public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)
    )
    (tmp_path / "other.pem").write_bytes(other)
    assert (
        main(["models", "import-bundle", str(bundle), "--public-key", str(tmp_path / "other.pem")])
        == 3
    )
    assert "not signed by this key" in capsys.readouterr().err
    manifest = bundle / "manifest.json"
    manifest.write_text(manifest.read_text().replace("tiny-chat", "tiny-chat-evil"))
    assert main(["models", "import-bundle", str(bundle), "--public-key", str(keys[1])]) == 3
    assert "modified after signing" in capsys.readouterr().err


def test_bundle_of_unknown_model_or_with_a_public_key_says_so(
    tmp_path, tiny_chat, keys, capsys
) -> None:
    assert (
        main(
            [
                "models",
                "bundle",
                "nope",
                "--out",
                str(tmp_path / "b"),
                "--signing-key",
                str(keys[0]),
            ]
        )
        == 3
    )
    assert "nope is not installed" in capsys.readouterr().err
    assert main(["models", "import", str(tiny_chat)]) == 0
    assert (
        main(
            [
                "models",
                "bundle",
                "tiny-chat",
                "--out",
                str(tmp_path / "b"),
                "--signing-key",
                str(keys[1]),
            ]
        )
        == 2
    )
    assert "not a readable PEM private key" in capsys.readouterr().err


def test_imported_models_outside_the_catalog_are_listed(tiny_chat, capsys) -> None:
    assert main(["models", "import", str(tiny_chat)]) == 0
    capsys.readouterr()
    assert main(["models", "list", "--json"]) == 0
    rows = {r["id"]: r for r in json.loads(capsys.readouterr().out)["models"]}
    assert rows["tiny-chat"]["installed"] == [str(tiny_chat.absolute())]
    assert rows["tiny-chat"]["kind"] == "chat" and rows["tiny-chat"]["fit"]
    assert "glm-4-9b-0414" in rows  # the catalog is still there
