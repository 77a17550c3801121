"""The Linux packages declare every system library the window's Qt xcb plugin loads.

ldd of PySide6's platforms/libqxcb.so and xcbglintegrations/*.so (what the freeze ships)
lists the sonames; each must map to a Debian package in
desktop/data/linux_window_libraries.json, be covered by the built .deb's Depends, and be
required (as a soname capability) by the .rpm. A library Qt starts to need that nobody
declared fails here, not on a user's desktop where the window silently does not appear.
Built from the stand-in freeze (seconds), so this runs in the default suite.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from types import ModuleType

import pytest

from tests.packaging.conftest import need


@pytest.fixture(scope="module")
def plugin_sonames(build: ModuleType) -> dict[str, str | None]:
    """soname -> path (None: not found here) of the system libraries Qt's xcb plugin loads."""
    need("ldd")
    import PySide6

    qt = Path(PySide6.__file__).parent / "Qt"
    plugins = build.qt_window_plugins(qt)
    assert plugins[0].is_file(), f"PySide6 ships no xcb plugin at {plugins[0]}"
    sonames: dict[str, str | None] = {}
    for plugin in plugins:
        sonames.update(build.ldd_sonames(plugin, qt))
    return sonames


def _alternatives(clause: str) -> set[str]:
    """The package names of one Depends clause (``a (>= 1) | b``)."""
    return {re.sub(r"\s*\(.*\)", "", alt).strip() for alt in clause.split("|")}


def test_every_library_the_xcb_plugin_loads_maps_to_a_package(
    build: ModuleType, plugin_sonames: dict[str, str | None]
) -> None:
    table = build.window_libraries()
    assert "libxcb-cursor.so.0" in plugin_sonames  # Qt >= 6.5: the one users lacked
    unmapped = sorted(set(plugin_sonames) - set(table) - {"ld-linux-x86-64.so.2"})
    assert not unmapped, (
        f"add these to {build.WINDOW_LIBRARIES.name} with their Debian package: {unmapped}"
    )


def test_the_table_names_the_package_dpkg_says_ships_each_library(
    build: ModuleType, plugin_sonames: dict[str, str | None]
) -> None:
    if shutil.which("dpkg") is None:
        pytest.skip("not a Debian system: no dpkg to ask which package ships a library")
    table = build.window_libraries()
    # Each library under every name usrmerge may have registered it as; one dpkg call.
    names: dict[str, set[str]] = {}
    for soname, path in plugin_sonames.items():
        if path is not None and soname in table:
            real = str(Path(path).resolve())
            names[soname] = {path, real, "/usr" + real, real.removeprefix("/usr")}
    every = sorted(set().union(*names.values()))
    listing = subprocess.run(
        ["dpkg", "-S", *every], capture_output=True, text=True, check=False
    ).stdout
    owners: dict[str, set[str]] = {}
    for line in listing.splitlines():
        packages, _, path = line.rpartition(": ")
        for package in packages.split(", "):
            owners.setdefault(path.strip(), set()).add(package.split(":")[0])
    wrong = {}
    for soname, paths in names.items():
        found = set().union(*(owners.get(p, set()) for p in paths))
        if found and not found & _alternatives(table[soname]):
            wrong[soname] = (table[soname], sorted(found))
    assert not wrong, f"soname: (table says, dpkg says) {wrong}"


def test_the_deb_depends_on_every_package_the_window_needs(
    build: ModuleType, stand_in_freeze: Path, tmp_path: Path, plugin_sonames: dict[str, str | None]
) -> None:
    need("dpkg-deb")
    deb = build.build_deb(stand_in_freeze, tmp_path / "out", "0.1.0")
    depends = subprocess.run(
        ["dpkg-deb", "-f", str(deb), "Depends"], capture_output=True, text=True, check=True
    ).stdout
    clauses = [_alternatives(c) for c in depends.split(",")]
    table = build.window_libraries()
    uncovered = [
        so
        for so in plugin_sonames
        if so in table and not any(_alternatives(table[so]) <= c for c in clauses)
    ]
    assert not uncovered, f"the .deb's Depends misses the packages of {uncovered}: {depends}"
    assert any("libxcb-cursor0" in c for c in clauses)
    assert any("libxkbcommon-x11-0" in c for c in clauses)
    assert any("libc6" in c for c in clauses)


def test_the_rpm_requires_every_library_the_window_needs(
    build: ModuleType, stand_in_freeze: Path, tmp_path: Path, plugin_sonames: dict[str, str | None]
) -> None:
    need("rpmbuild", "rpm")
    rpm = build.build_rpm(stand_in_freeze, tmp_path / "out", "0.1.0")
    requires = set(
        subprocess.run(
            ["rpm", "-qp", "--requires", str(rpm)], capture_output=True, text=True, check=True
        ).stdout.split("\n")
    )
    missing = [
        so
        for so in plugin_sonames
        if not build.GLIBC_SONAMES.match(so)
        and so != "ld-linux-x86-64.so.2"
        and f"{so}()(64bit)" not in requires
    ]
    assert not missing, f"the .rpm does not require {missing}"
    assert any(r.startswith("glibc >= ") for r in requires)
