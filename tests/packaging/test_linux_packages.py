"""Linux packages: what IT installs, and that signatures catch tampering.

Built from a stand-in tree shaped like the freeze (seconds, not minutes); the real
freeze goes through the same functions in test_frozen_deb.py (-m packaging).
"""

from __future__ import annotations

import configparser
import json
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from types import ModuleType

from tests.packaging.conftest import flip_byte, need


def _run(*cmd: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(c) for c in cmd], capture_output=True, text=True, env=env, check=False, timeout=120
    )


def test_deb_installs_app_launcher_desktop_entry_and_empty_policy_conffile(
    build: ModuleType, stand_in_freeze: Path, tmp_path: Path
) -> None:
    need("dpkg-deb")
    deb = build.build_deb(stand_in_freeze, tmp_path / "out", "0.1.0")
    info = _run("dpkg-deb", "--field", deb, "Package", "Version", "Depends").stdout
    assert "Package: edgedesk" in info and "Version: 0.1.0" in info and "libc6 (>=" in info
    root = tmp_path / "root"
    assert _run("dpkg-deb", "-x", deb, root).returncode == 0
    assert "exec /opt/edgedesk/edgedesk" in (root / "usr/bin/edgedesk").read_text()
    assert _run(root / "opt/edgedesk/edgedesk").stdout.strip() == "edgedesk stand-in"
    # Installing must not lock anything IT did not choose: the shipped policy is empty.
    assert json.loads((root / "etc/edgedesk/policy.json").read_text()) == {}
    control = tmp_path / "control"
    _run("dpkg-deb", "-e", deb, control)
    assert (control / "conffiles").read_text().split() == ["/etc/edgedesk/policy.json"]
    entry = configparser.ConfigParser(interpolation=None)
    entry.read(root / "usr/share/applications/org.edgedesk.EdgeDesk.desktop")
    assert entry["Desktop Entry"]["Exec"] == "/opt/edgedesk/edgedesk"
    assert (root / "usr/share/icons/hicolor/scalable/apps/org.edgedesk.EdgeDesk.svg").is_file()
    meta = ET.parse(root / "usr/share/metainfo/org.edgedesk.EdgeDesk.metainfo.xml").getroot()
    assert meta.findtext("id") == "org.edgedesk.EdgeDesk"
    assert meta.find("releases/release").get("version") == "0.1.0"
    assert meta.find("launchable").text == "org.edgedesk.EdgeDesk.desktop"


def test_debsig_verify_accepts_the_signed_deb_and_rejects_tampered_or_unsigned(
    build: ModuleType, stand_in_freeze: Path, tmp_path: Path, gpg_key: tuple[str, dict[str, str]]
) -> None:
    need("dpkg-deb", "debsigs", "debsig-verify")
    keyid, env = gpg_key
    unsigned = build.build_deb(stand_in_freeze, tmp_path / "out", "0.1.0")
    signed = tmp_path / "signed.deb"
    signed.write_bytes(unsigned.read_bytes())
    build.sign_deb(signed, keyid, env)
    public = subprocess.run(
        ["gpg", "--batch", "--export", keyid], env=env, check=True, capture_output=True
    ).stdout
    policies, keyrings = tmp_path / "policies", tmp_path / "keyrings"
    build.debsig_trust(keyid, public, policies, keyrings)
    verify = ("debsig-verify", "--policies-dir", policies, "--keyrings-dir", keyrings)
    # debsig-verify's gpg needs a home folder; a fresh one proves only the keyring counts.
    home = tmp_path / "verify-gnupg"
    home.mkdir(mode=0o700)
    env = {**env, "GNUPGHOME": str(home)}
    ok = _run(*verify, signed, env=env)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    # One flipped byte inside data.tar (the installed files) must be caught.
    data_member = signed.read_bytes().index(b"data.tar")
    bad = _run(*verify, flip_byte(signed, data_member + 60 + 500), env=env)
    assert bad.returncode != 0
    assert _run(*verify, unsigned, env=env).returncode != 0


def test_rpm_signature_verifies_and_a_tampered_rpm_fails(
    build: ModuleType, stand_in_freeze: Path, tmp_path: Path, gpg_key: tuple[str, dict[str, str]]
) -> None:
    need("rpmbuild", "rpmsign", "rpmkeys")
    keyid, env = gpg_key
    rpm = build.build_rpm(stand_in_freeze, tmp_path / "out", "0.1.0")
    listing = _run("rpm", "-qpl", rpm).stdout.split()
    assert {"/opt/edgedesk/edgedesk", "/usr/bin/edgedesk", "/etc/edgedesk/policy.json"} <= set(
        listing
    )
    assert _run("rpm", "-qpc", rpm).stdout.split() == ["/etc/edgedesk/policy.json"]
    build.sign_rpm(rpm, keyid, env)
    asc = tmp_path / "key.asc"
    asc.write_bytes(
        subprocess.run(
            ["gpg", "--batch", "--armor", "--export", keyid],
            env=env,
            check=True,
            capture_output=True,
        ).stdout
    )
    db = tmp_path / "rpmdb"
    assert _run("rpmkeys", "--dbpath", db, "--import", asc).returncode == 0
    ok = _run("rpm", "--dbpath", db, "-K", rpm)
    assert ok.returncode == 0 and "signatures OK" in ok.stdout, ok.stdout + ok.stderr
    bad = _run("rpm", "--dbpath", db, "-K", flip_byte(rpm, -300))
    assert bad.returncode != 0
