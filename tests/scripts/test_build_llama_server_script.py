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


def test_the_shared_build_keeps_llama_cpps_libraries_beside_the_binary(tmp_path: Path) -> None:
    """EDGEDESK_LLAMA_SHARED=1 (scripts/device-check.sh): shared libraries, loadable from
    beside the binary ($ORIGIN), the targets llama-cpp-python loads built too, and the
    libraries with their soname links copied beside llama-server. cmake here is a
    stand-in that records its arguments and makes the files a build would."""
    source = tmp_path / "src"
    (source / "vendor" / "llama.cpp").mkdir(parents=True)
    (source / "vendor" / "llama.cpp" / "CMakeLists.txt").write_text("project(x)\n")
    tools = tmp_path / "bin"
    tools.mkdir()
    calls = tmp_path / "calls"
    fake = tools / "cmake"
    fake.write_text(
        "#!/usr/bin/env bash\n"
        f'echo "$*" >> {calls}\n'
        'if [ "$1" = --build ]; then\n'
        '  mkdir -p "$2/bin" && touch "$2/bin/llama-server" "$2/bin/libllama.so.0.5.0"\n'
        '  ln -sf libllama.so.0.5.0 "$2/bin/libllama.so.0"\n'
        "fi\n"
    )
    fake.chmod(0o755)
    cache = tmp_path / "cache"
    env = {
        **os.environ,
        "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}",
        "EDGEDESK_WHEEL_CACHE": str(cache),
        "EDGEDESK_LLAMA_SRC": str(source),
        "EDGEDESK_LLAMA_SHARED": "1",
        "EDGEDESK_CMAKE_ARGS": "-DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90",
    }
    done = subprocess.run(
        [str(ROOT / "scripts" / "build-llama-server.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    configure, build = calls.read_text().splitlines()
    assert (
        "-DBUILD_SHARED_LIBS=ON" in configure and "-DCMAKE_BUILD_RPATH_USE_ORIGIN=ON" in configure
    )
    assert "-DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90" in configure
    assert "--target llama-server llama mtmd" in build
    folder = Path(done.stdout.strip().splitlines()[-1]).parent
    assert (folder / "llama-server").is_file() and (folder / "libllama.so.0.5.0").is_file()
    assert (folder / "libllama.so.0").is_symlink()
    assert "CUDA_ARCHITECTURES=90" in (folder / "BUILD").read_text()
    assert "shared libraries" in (folder / "BUILD").read_text()
