"""The MSI (wixl) with policy properties, Authenticode signing, the SBOM and SHA256SUMS.

The MSI here wraps a stand-in payload: a real Windows freeze only exists on the hosted
Windows runner (release.yml), which feeds it to the same build_msi().
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from types import ModuleType

from desktop.policy._schema import KEYS
from tests.packaging.conftest import need


def _run(*cmd: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(c) for c in cmd], capture_output=True, text=True, cwd=cwd, check=False, timeout=120
    )


def _msi(build: ModuleType, tmp_path: Path) -> Path:
    need("wixl", "wixl-heat", "msiinfo", "msibuild")
    payload = tmp_path / "payload"
    (payload / "_internal" / "llama_cpp" / "lib").mkdir(parents=True)
    (payload / "edgedesk.exe").write_bytes(b"MZ stand-in")
    (payload / "_internal" / "llama_cpp" / "lib" / "llama.dll").write_bytes(b"MZ stand-in")
    return build.build_msi(payload, tmp_path / "out", "0.1.0")


def test_msi_properties_write_every_policy_key_only_when_given(
    build: ModuleType, tmp_path: Path
) -> None:
    msi = _msi(build, tmp_path)
    registry = _run("msiinfo", "export", msi, "Registry").stdout
    components = _run("msiinfo", "export", msi, "Component").stdout
    secure = _run("msiinfo", "export", msi, "Property").stdout
    for key in KEYS:
        prop = key.name.upper()
        row = next(line for line in registry.splitlines() if f"\t{key.name}\t" in line)
        assert "Software\\Policies\\EdgeDesk" in row and f"[{prop}]" in row
        # Unset property: the component's condition is false, nothing is written.
        assert f"Policy{key.name}\t" in components and f"\t{prop}\t" in components
        assert prop in secure.split("SecureCustomProperties\t")[1].splitlines()[0].split(";")
    files = _run("msiinfo", "export", msi, "File").stdout
    assert "edgedesk.exe" in files and "llama.dll" in files
    assert "ALLUSERS\t1" in secure  # per-machine


def test_authenticode_signature_verifies_and_a_tampered_msi_fails(
    build: ModuleType, tmp_path: Path
) -> None:
    need("osslsigncode", "openssl")
    msi = _msi(build, tmp_path)
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    made = _run(
        "openssl",
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=EdgeDesk Test Signing",
        "-keyout",
        key,
        "-out",
        cert,
        "-addext",
        "extendedKeyUsage=codeSigning",
    )
    assert made.returncode == 0, made.stderr
    signed = tmp_path / "signed.msi"
    done = _run(
        "osslsigncode",
        "sign",
        "-certs",
        cert,
        "-key",
        key,
        "-n",
        "EdgeDesk",
        "-h",
        "sha256",
        "-in",
        msi,
        "-out",
        signed,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    ok = _run("osslsigncode", "verify", "-CAfile", cert, "-in", signed)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    # Tamper as an attacker would: loosen the default of a policy property in the tables.
    tampered = tmp_path / "tampered.msi"
    shutil.copy(signed, tampered)
    assert (
        _run(
            "msibuild",
            tampered,
            "-q",
            "INSERT INTO `Property` (`Property`, `Value`) VALUES ('ALLOWDOWNLOADS', '1')",
        ).returncode
        == 0
    )
    assert _run("osslsigncode", "verify", "-CAfile", cert, "-in", tampered).returncode != 0
    assert _run("osslsigncode", "verify", "-CAfile", cert, "-in", msi).returncode != 0


def test_sbom_lists_runtime_python_deps_and_native_libraries_with_hashes(
    build: ModuleType, stand_in_freeze: Path, tmp_path: Path
) -> None:
    bom = json.loads(build.write_sbom(stand_in_freeze, tmp_path / "out").read_text())
    assert bom["bomFormat"] == "CycloneDX" and bom["specVersion"] == "1.6"
    names = {c["name"].lower().replace("_", "-") for c in bom["components"]}
    assert {"llama-cpp-python", "pyside6-essentials", "fastapi", "huggingface-hub"} <= names
    assert not {"pytest", "mypy", "ruff", "pyinstaller"} & names  # test/build tools never ship
    lib = stand_in_freeze / "_internal" / "llama_cpp" / "lib" / "libggml-base.so"
    native = [c for c in bom["components"] if c["bom-ref"].startswith("native:")]
    assert [c["name"] for c in native] == ["libggml-base.so"]
    assert native[0]["hashes"] == [{"alg": "SHA-256", "content": build.sha256(lib)}]
    llama_ref = next(
        c["bom-ref"]
        for c in bom["components"]
        if c["name"].lower().replace("_", "-") == "llama-cpp-python"
    )
    deps = next(d for d in bom["dependencies"] if d["ref"] == llama_ref)
    assert native[0]["bom-ref"] in deps["dependsOn"]


def test_sha256sums_verify_with_sha256sum_and_catch_a_changed_file(
    build: ModuleType, tmp_path: Path
) -> None:
    need("sha256sum")
    (tmp_path / "a.deb").write_bytes(b"deb")
    (tmp_path / "b.msi").write_bytes(b"msi")
    sums = build.write_checksums(tmp_path)
    assert len(sums.read_text().splitlines()) == 2
    assert _run("sha256sum", "-c", sums.name, cwd=tmp_path).returncode == 0
    (tmp_path / "b.msi").write_bytes(b"msI")
    assert _run("sha256sum", "-c", sums.name, cwd=tmp_path).returncode != 0
