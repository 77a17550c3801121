"""Build EdgeDesk's release artifacts: freeze, Linux packages, MSI, SBOM, checksums, signatures.

One place for every OS (see packaging/README.md for what runs where):

    python packaging/build.py --freeze --deb --rpm --out dist      # Linux release
    python packaging/build.py --freeze-dir dist/edgedesk --msi --out dist   # MSI (wixl)
    python packaging/build.py --sign-deb KEYID --sign-rpm KEYID --out dist  # GPG (GNUPGHOME)

Every run ends by writing ``sbom.cdx.json`` (when a freeze exists) and ``SHA256SUMS``
over every artifact in ``--out``. The functions are importable (tests load this file
with importlib); nothing here imports the ``desktop`` package except for its version.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
LINUX = HERE / "linux"
SPEC = HERE / "pyinstaller" / "edgedesk.spec"
WXS = HERE / "windows" / "edgedesk.wxs"
APP_ID = "org.edgedesk.EdgeDesk"
# The llama.cpp/ggml shared libraries llama-cpp-python ships (and Metal shader bundles).
NATIVE = re.compile(r"^(lib)?(llama|ggml[\w-]*|mtmd)(\.so(\.\d+)*|\.dylib|\.dll)$|\.metallib$")
SUMS = "SHA256SUMS"
SBOM = "sbom.cdx.json"


def app_version() -> str:
    """The version in desktop/__init__.py, read without importing the app."""
    text = (ROOT / "desktop" / "__init__.py").read_text(encoding="utf-8")
    found = re.search(r'__version__ = "([^"]+)"', text)
    if not found:
        raise SystemExit("cannot find __version__ in desktop/__init__.py")
    return found.group(1)


def sha256(path: Path) -> str:
    """Hex SHA-256 of a file, read in chunks (freezes hold 100 MB libraries)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _run(cmd: Sequence[str | Path], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """Run a tool; on failure raise with its output so CI logs say why."""
    done = subprocess.run(  # noqa: S603
        [str(c) for c in cmd],
        capture_output=True,
        text=True,
        check=False,
        **kwargs,
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(map(str, cmd))} failed ({done.returncode}):\n"
            f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
        )
    return done


# ------------------------------------------------------------------ freeze


def freeze(dist: Path, work: Path | None = None) -> Path:
    """PyInstaller one-folder freeze into ``dist/edgedesk``; returns that folder."""
    work = work or dist.parent / "pyinstaller-work"
    started = time.monotonic()
    _run(
        [
            sys.executable,
            "-m",
            "PyInstaller",
            "--noconfirm",
            "--log-level",
            "WARN",
            "--distpath",
            dist,
            "--workpath",
            work,
            SPEC,
        ],
        cwd=ROOT,
    )
    print(f"freeze: {time.monotonic() - started:.0f} s -> {dist / 'edgedesk'}")
    return dist / "edgedesk"


# ------------------------------------------------------------------ Linux


def _glibc() -> str:
    """The glibc this freeze was built against: the floor for every target machine."""
    found = os.confstr("CS_GNU_LIBC_VERSION") or "glibc 2.31"
    return found.split()[-1]


# What the frozen window needs from the system (Qt's xcb platform plugin): the one list,
# shared with the window's start-up check (desktop/ui/shell/system_libraries.py).
WINDOW_LIBRARIES = ROOT / "desktop" / "data" / "linux_window_libraries.json"
# glibc's own libraries: the "libc6 (>= ...)" / "glibc >= ..." line already covers them.
GLIBC_SONAMES = re.compile(r"^(libc|libm|libdl|libpthread|librt|ld-linux[\w-]*)\.so")


def window_libraries() -> dict[str, str]:
    """soname -> Debian package (``A | B`` for either) of every library Qt's xcb plugin loads."""
    table: dict[str, str] = json.loads(WINDOW_LIBRARIES.read_text(encoding="utf-8"))["libraries"]
    return table


def deb_depends() -> str:
    """The .deb's Depends: glibc, then every package the window's libraries come from."""
    packages = sorted(
        {pkg for so, pkg in window_libraries().items() if not GLIBC_SONAMES.match(so)}
    )
    return ", ".join([f"libc6 (>= {_glibc()})", *packages])


def rpm_requires() -> list[str]:
    """The .rpm's Requires: glibc, then each library by its soname capability."""
    return [
        f"glibc >= {_glibc()}",
        *(f"{so}()(64bit)" for so in sorted(window_libraries()) if not GLIBC_SONAMES.match(so)),
    ]


def ldd_sonames(binary: Path, own: Path) -> dict[str, str | None]:
    """soname -> resolved path (None: not found) of what ``binary`` loads from the system,
    as ldd lists it; libraries resolved under ``own`` (Qt's own) are left out."""
    listing = _run(["ldd", binary]).stdout
    found: dict[str, str | None] = {}
    for line in listing.splitlines():
        name, arrow, rest = line.strip().partition(" => ")
        if not arrow:
            continue  # linux-vdso, the loader itself
        where = rest.split(" (")[0].strip()
        if where == "not found":
            found[name] = None
        elif not Path(where).resolve().is_relative_to(own.resolve()):
            found[name] = where
    return found


def qt_window_plugins(qt: Path) -> list[Path]:
    """Qt's xcb platform plugin and its GL integrations under PySide6's ``Qt`` folder."""
    plugins = qt / "plugins"
    return [
        plugins / "platforms" / "libqxcb.so",
        *sorted((plugins / "xcbglintegrations").glob("*.so")),
    ]


def stage_linux(freeze_dir: Path, stage: Path, version: str) -> Path:
    """Lay out the installed file tree (/opt, /usr, /etc) under ``stage``."""
    if stage.exists():
        shutil.rmtree(stage)
    shutil.copytree(freeze_dir, stage / "opt" / "edgedesk", symlinks=True)
    files = {
        "usr/bin/edgedesk": ((LINUX / "edgedesk.sh").read_bytes(), 0o755),
        f"usr/share/applications/{APP_ID}.desktop": (
            (LINUX / f"{APP_ID}.desktop").read_bytes(),
            0o644,
        ),
        f"usr/share/metainfo/{APP_ID}.metainfo.xml": (
            (LINUX / f"{APP_ID}.metainfo.xml")
            .read_text(encoding="utf-8")
            .replace("{version}", version)
            .replace("{date}", dt.date.today().isoformat())
            .encode(),
            0o644,
        ),
        f"usr/share/icons/hicolor/scalable/apps/{APP_ID}.svg": (
            (ROOT / "resources" / "icons" / "app.svg").read_bytes(),
            0o644,
        ),
        # An empty policy by default: installing must not lock anything IT did not choose.
        "etc/edgedesk/policy.json": ((LINUX / "policy.json").read_bytes(), 0o644),
    }
    example = ROOT / "packaging" / "policy" / "build" / "policy.example.json"
    if example.exists():
        files["usr/share/doc/edgedesk/policy.example.json"] = (example.read_bytes(), 0o644)
    files["usr/share/doc/edgedesk/README.md"] = (
        (HERE / "README.md").read_bytes() if (HERE / "README.md").exists() else b"",
        0o644,
    )
    for rel, (data, mode) in files.items():
        target = stage / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        target.chmod(mode)
    for path in [stage, *stage.rglob("*")]:
        if path.is_dir() and not path.is_symlink():
            path.chmod(0o755)
    return stage


def _installed_kib(stage: Path) -> int:
    return (
        sum(p.stat().st_size for p in stage.rglob("*") if p.is_file() and not p.is_symlink())
        // 1024
        + 1
    )


def build_deb(freeze_dir: Path, out: Path, version: str, compression: str = "gzip") -> Path:
    """A .deb installing to /opt/edgedesk, with /etc/edgedesk/policy.json as a conffile."""
    out.mkdir(parents=True, exist_ok=True)
    arch = _run(["dpkg", "--print-architecture"]).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="edgedesk-deb-") as tmp:
        stage = stage_linux(freeze_dir, Path(tmp) / "root", version)
        debian = stage / "DEBIAN"
        debian.mkdir()
        debian.chmod(0o755)  # dpkg-deb demands it; mkdir's mode is cut by a strict umask
        control = (
            (LINUX / "control.in")
            .read_text(encoding="utf-8")
            .format(
                version=version,
                arch=arch,
                installed_size=_installed_kib(stage),
                depends=deb_depends(),
            )
        )
        (debian / "control").write_text(control, encoding="utf-8")
        shutil.copy(LINUX / "conffiles", debian / "conffiles")
        for meta in debian.iterdir():
            meta.chmod(0o644)
        target = out / f"edgedesk_{version}_{arch}.deb"
        fakeroot = ["fakeroot"] if shutil.which("fakeroot") else []
        _run(
            [
                *fakeroot,
                "dpkg-deb",
                "--root-owner-group",
                f"-Z{compression}",
                "--build",
                stage,
                target,
            ]
        )
    return target


def build_rpm(freeze_dir: Path, out: Path, version: str) -> Path:
    """An .rpm with the same tree; policy.json is %config(noreplace)."""
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="edgedesk-rpm-") as tmp:
        stage = stage_linux(freeze_dir, Path(tmp) / "root", version)
        spec = Path(tmp) / "edgedesk.spec"
        spec.write_text(
            (LINUX / "edgedesk.spec.in")
            .read_text(encoding="utf-8")
            .replace("{rpm_version}", version.replace("-", "~"))
            .replace("{requires}", "\n".join(f"Requires:       {r}" for r in rpm_requires()))
            .replace("{stage}", str(stage)),
            encoding="utf-8",
        )
        _run(
            [
                "rpmbuild",
                "-bb",
                "--quiet",
                "--define",
                f"_topdir {tmp}/top",
                "--define",
                f"_rpmdir {out}",
                "--define",
                "_build_name_fmt %%{NAME}-%%{VERSION}-%%{RELEASE}.%%{ARCH}.rpm",
                spec,
            ]
        )
    found = sorted(out.glob(f"edgedesk-{version.replace('-', '~')}-1.*.rpm"))
    if not found:
        raise RuntimeError(f"rpmbuild wrote no package into {out}")
    return found[-1]


def sign_deb(deb: Path, keyid: str, env: dict[str, str] | None = None) -> None:
    """Add a debsigs 'origin' signature made with the GPG key (GNUPGHOME selects the keyring).

    The signing GNUPGHOME's gpg.conf must say ``digest-algo SHA512``: debsigs otherwise
    signs with SHA-1, which debsig-verify rejects.
    """
    _run(["debsigs", "--sign=origin", f"--default-key={keyid}", deb], env=env)


def sign_rpm(rpm: Path, keyid: str, env: dict[str, str] | None = None) -> None:
    """Sign the rpm header and payload with the GPG key (GNUPGHOME selects the keyring)."""
    # Debian's rpm looks for a 'gpg2' that does not exist there; name the real binary.
    gpg = shutil.which("gpg") or "gpg"
    _run(
        ["rpmsign", "--addsign", "--define", f"_gpg_name {keyid}", "--define", f"__gpg {gpg}", rpm],
        env=env,
    )


def debsig_trust(keyid: str, public_key: bytes, policies: Path, keyrings: Path) -> None:
    """Write the debsig-verify policy and keyring for ``keyid`` (what IT deploys to /etc/debsig)."""
    (policies / keyid).mkdir(parents=True, exist_ok=True)
    (keyrings / keyid).mkdir(parents=True, exist_ok=True)
    policy = (LINUX / "debsig" / "edgedesk.pol.in").read_text(encoding="utf-8")
    (policies / keyid / "edgedesk.pol").write_text(
        policy.replace("{keyid}", keyid), encoding="utf-8"
    )
    (keyrings / keyid / "debsig.gpg").write_bytes(public_key)


# ------------------------------------------------------------------ Windows


def policy_properties() -> list[tuple[str, str]]:
    """(MSI property, registry value name) for every policy key in the schema."""
    sys.path.insert(0, str(ROOT))
    try:
        from desktop.policy import KEYS
    finally:
        sys.path.remove(str(ROOT))
    return [(key.name.upper(), key.name) for key in KEYS]


def build_msi(payload: Path, out: Path, version: str) -> Path:
    """Compile edgedesk.wxs with wixl over ``payload`` (a Windows freeze), then finish it.

    wixl cannot compile component conditions or extend SecureCustomProperties, so both
    are applied with msibuild from the policy schema: a policy value is written only if
    its property was given, and every property reaches the elevated install.
    """
    out.mkdir(parents=True, exist_ok=True)
    numeric = ".".join(re.findall(r"\d+", version)[:3])  # MSI wants a.b.c
    target = out / f"edgedesk-{version}-x64.msi"
    with tempfile.TemporaryDirectory(prefix="edgedesk-msi-") as tmp:
        files = sorted(p.relative_to(payload).as_posix() for p in payload.rglob("*") if p.is_file())
        heat = _run(
            [
                "wixl-heat",
                "--var",
                "var.SourceDir",
                "--directory-ref",
                "INSTALLDIR",
                "--component-group",
                "AppFiles",
                "--win64",
                "-p",
                "",
            ],
            input="\n".join(files) + "\n",
        )
        fragment = Path(tmp) / "files.wxs"
        fragment.write_text(heat.stdout, encoding="utf-8")
        # wixl resolves sources relative to its working directory, never absolute paths.
        _run(
            [
                "wixl",
                "-a",
                "x64",
                "-D",
                f"Version={numeric}",
                "-D",
                "Win64=yes",
                "-D",
                f"SourceDir={os.path.relpath(payload, tmp)}",
                "-o",
                target.resolve(),
                WXS,
                fragment,
            ],
            cwd=tmp,
        )
    props = policy_properties()
    current = _run(["msiinfo", "export", target, "Property"]).stdout
    secure = re.search(r"^SecureCustomProperties\t(.*)$", current, re.M)
    names = [*(secure.group(1).split(";") if secure else []), *(p for p, _ in props)]
    # Names come from our own schema (identifiers, no quotes), not from user input.
    queries = [
        f"UPDATE `Component` SET `Condition` = '{prop}' "  # noqa: S608
        f"WHERE `Component` = 'Policy{name}'"
        for prop, name in props
    ]
    queries.append(
        f"UPDATE `Property` SET `Value` = '{';'.join(names)}' "  # noqa: S608
        "WHERE `Property` = 'SecureCustomProperties'"
    )
    for query in queries:
        _run(["msibuild", target, "-q", query])
    return target


# ------------------------------------------------------------------ SBOM and sums


def _runtime_closure(root_dist: str = "edgedesk") -> set[str]:
    """Normalised names of every distribution the app needs at run time (no extras)."""
    from importlib import metadata

    from packaging.requirements import Requirement  # PyPI 'packaging' (pip/PyInstaller dep)

    def norm(name: str) -> str:
        return re.sub(r"[-_.]+", "-", name).lower()

    seen: set[str] = set()
    todo = [root_dist]
    while todo:
        name = todo.pop()
        if norm(name) in seen:
            continue
        seen.add(norm(name))
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for line in requires:
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return seen


def native_components(freeze_dir: Path, llama_version: str) -> list[dict[str, Any]]:
    """CycloneDX components for the llama.cpp/ggml libraries in a freeze, with SHA-256."""
    components = []
    for path in sorted(
        p
        for p in freeze_dir.rglob("*")
        if p.is_file() and not p.is_symlink() and NATIVE.search(p.name)
    ):
        rel = path.relative_to(freeze_dir).as_posix()
        components.append(
            {
                "type": "library",
                "bom-ref": f"native:{rel}",
                "name": path.name,
                "version": f"llama-cpp-python-{llama_version}",
                "description": "llama.cpp/ggml native library bundled by llama-cpp-python",
                "hashes": [{"alg": "SHA-256", "content": sha256(path)}],
                "properties": [{"name": "edgedesk:path", "value": rel}],
            }
        )
    return components


def write_sbom(freeze_dir: Path, out: Path, python: str = sys.executable) -> Path:
    """CycloneDX 1.6 JSON: the app's Python runtime closure plus native llama.cpp libraries."""
    out.mkdir(parents=True, exist_ok=True)
    done = _run(
        [
            python,
            "-m",
            "cyclonedx_py",
            "environment",
            "--pyproject",
            ROOT / "pyproject.toml",
            "--sv",
            "1.6",
            "--of",
            "JSON",
            "-o",
            "-",
            # Its JSON-schema validation takes ~90 s on 2 cores; we edit the BOM anyway.
            "--no-validate",
            python,
        ]
    )
    bom = json.loads(done.stdout)
    keep = _runtime_closure()
    kept = [
        c for c in bom.get("components", []) if re.sub(r"[-_.]+", "-", c["name"]).lower() in keep
    ]
    refs = {c["bom-ref"] for c in kept} | {bom["metadata"]["component"]["bom-ref"]}
    llama = next((c for c in kept if c["name"] in ("llama_cpp_python", "llama-cpp-python")), None)
    natives = native_components(freeze_dir, llama["version"] if llama else "unknown")
    bom["components"] = kept + natives
    deps = [d for d in bom.get("dependencies", []) if d["ref"] in refs]
    for dep in deps:
        dep["dependsOn"] = [r for r in dep.get("dependsOn", []) if r in refs]
        if llama and dep["ref"] == llama["bom-ref"]:
            dep["dependsOn"] += [n["bom-ref"] for n in natives]
    bom["dependencies"] = deps + [{"ref": n["bom-ref"], "dependsOn": []} for n in natives]
    target = out / SBOM
    target.write_text(json.dumps(bom, indent=2) + "\n", encoding="utf-8")
    return target


def write_checksums(out: Path, artifacts: Iterable[Path] | None = None) -> Path:
    """``SHA256SUMS`` in sha256sum format for every artifact file in ``out``."""
    files = (
        sorted(artifacts)
        if artifacts is not None
        else sorted(p for p in out.iterdir() if p.is_file() and p.name != SUMS)
    )
    lines = [f"{sha256(p)}  {p.relative_to(out).as_posix()}\n" for p in files]
    target = out / SUMS
    target.write_text("".join(lines), encoding="utf-8")
    return target


# ------------------------------------------------------------------ command line


def main(argv: Sequence[str] | None = None) -> int:
    """Build what the flags ask for into --out; always finish with SBOM and SHA256SUMS."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "dist")
    parser.add_argument("--freeze", action="store_true", help="run PyInstaller first")
    parser.add_argument("--freeze-dir", type=Path, help="an existing one-folder freeze")
    parser.add_argument("--deb", action="store_true")
    parser.add_argument("--rpm", action="store_true")
    parser.add_argument("--msi", action="store_true", help="needs a Windows freeze in --freeze-dir")
    parser.add_argument("--deb-compression", default="gzip", choices=["gzip", "xz", "zstd"])
    parser.add_argument("--sign-deb", metavar="KEYID")
    parser.add_argument("--sign-rpm", metavar="KEYID")
    parser.add_argument("--version", default=app_version())
    args = parser.parse_args(argv)
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    freeze_dir = args.freeze_dir or out / "freeze" / "edgedesk"
    if args.freeze:
        freeze_dir = freeze(out / "freeze", out / "pyinstaller-work")
    artifacts: list[Path] = []
    if args.deb:
        artifacts.append(build_deb(freeze_dir, out, args.version, args.deb_compression))
        if args.sign_deb:
            sign_deb(artifacts[-1], args.sign_deb)
    if args.rpm:
        artifacts.append(build_rpm(freeze_dir, out, args.version))
        if args.sign_rpm:
            sign_rpm(artifacts[-1], args.sign_rpm)
    if args.msi:
        artifacts.append(build_msi(freeze_dir, out, args.version))
    for artifact in artifacts:
        print(f"{artifact.name}: {artifact.stat().st_size / 1e6:.1f} MB")
    if freeze_dir.is_dir():
        artifacts.append(write_sbom(freeze_dir, out))
    existing = [p for p in out.iterdir() if p.is_file() and p.name != SUMS]
    print(write_checksums(out, existing))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
