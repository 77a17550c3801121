"""The real thing: a .deb of the PyInstaller freeze, unpacked into a temporary root.

Slow (the freeze takes ~2-6 min on 2 cores), so marked ``packaging`` and run with:

    python -m pytest -m packaging tests/packaging
    # or reuse a freeze: python packaging/build.py --freeze --out dist
    #                    EDGEDESK_FREEZE_DIR=dist/freeze/edgedesk python -m pytest -m packaging
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import httpx
import pytest

from tests.conftest import wait_until
from tests.fixtures.children import free_port
from tests.packaging.conftest import need

pytestmark = pytest.mark.packaging


@pytest.fixture(scope="module")
def installed_root(build: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The frozen app's .deb, extracted into a fresh root as dpkg would lay it out."""
    need("dpkg-deb")
    work = tmp_path_factory.mktemp("frozen")
    given = os.environ.get("EDGEDESK_FREEZE_DIR")
    freeze_dir = Path(given) if given else build.freeze(work / "dist", work / "build")
    deb = build.build_deb(freeze_dir, work / "out", build.app_version())
    root = work / "root"
    subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
    return root


def test_frozen_version_names_the_backend(installed_root: Path) -> None:
    done = subprocess.run(
        [str(installed_root / "opt/edgedesk/edgedesk"), "--version"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith("edgedesk ")
    assert done.stdout.splitlines()[1].startswith("backend: ")  # llama.cpp libs loaded


@pytest.fixture
def frozen_server(installed_root: Path, tiny_chat: Path, edgedesk_home: Path) -> Iterator[str]:
    """`edgedesk serve` from the frozen tree on a free loopback port; its base URL."""
    port = free_port()
    proc = subprocess.Popen(
        [
            str(installed_root / "opt/edgedesk/edgedesk"),
            "serve",
            "--no-auth",
            "--offline",
            "--model",
            str(tiny_chat),
            "--port",
            str(port),
        ],
        env={**os.environ, "EDGEDESK_HOME": str(edgedesk_home)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:

        def healthy() -> bool:
            if proc.poll() is not None:
                pytest.fail(f"frozen serve exited {proc.returncode}: {proc.stdout.read()}")
            try:
                return httpx.get(f"{base}/health", timeout=2).status_code == 200
            except httpx.TransportError:
                return False

        wait_until(healthy, 90, "the frozen server healthy")
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        proc.stdout.close()


def test_frozen_serve_answers_health_and_models(frozen_server: str, tiny_chat: Path) -> None:
    health = httpx.get(f"{frozen_server}/health", timeout=10)
    assert health.status_code == 200
    models = httpx.get(f"{frozen_server}/v1/models", timeout=10).json()
    assert models["object"] == "list"
    assert len(models["data"]) >= 1
