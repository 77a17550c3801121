"""scripts/build-llama-server.sh: what it does before it compiles anything."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_source_without_llama_cpp_fails_with_one_line_and_builds_nothing(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    env = {
        **os.environ,
        "EDGEDESK_WHEEL_CACHE": str(cache),
        "EDGEDESK_LLAMA_SRC": str(tmp_path / "not-a-source"),
    }
    done = subprocess.run(
        [str(ROOT / "scripts" / "build-llama-server.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert f"no llama.cpp under {tmp_path / 'not-a-source'}/vendor/llama.cpp" in done.stderr
    assert not list(cache.glob("llama-server-native-*/llama-server"))
