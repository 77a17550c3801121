"""llama.cpp's library not loading (a CUDA build without the NVIDIA driver): one clear line.

No CUDA is needed: a stand-in ``llama_cpp`` package first on the path fails exactly as
llama-cpp-python 0.3.x does when ``libllama.so`` needs a ``libcuda.so.1`` the machine
lacks (``_ctypes_extensions.load_shared_library``'s RuntimeError, same wording).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from desktop.base.config import NoPolicy
from desktop.base.errors import EngineUnavailable, ModelLoadError
from desktop.engine._hardware.library import CPU_REINSTALL, library_error
from desktop.root.context import build_context

ROOT = Path(__file__).resolve().parents[3]
NO_DRIVER = "libcuda.so.1: cannot open shared object file: No such file or directory"


def _failed(path: str, reason: str) -> RuntimeError:
    return RuntimeError(f"Failed to load shared library '{path}': {reason}")


def _fake_llama_cpp(folder: Path, reason: str = NO_DRIVER) -> Path:
    """A ``llama_cpp`` package whose import fails as the real one does without the driver."""
    package = folder / "fake" / "llama_cpp"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        "import pathlib\n"
        "lib = pathlib.Path(__file__).parent / 'lib' / 'libllama.so'\n"
        f"raise RuntimeError(f\"Failed to load shared library '{{lib}}': {reason}\")\n"
    )
    return folder / "fake"


def test_a_cuda_build_without_the_driver_names_it_and_both_ways_out() -> None:
    problem = library_error(_failed("/venv/site-packages/llama_cpp/lib/libllama.so", NO_DRIVER))
    assert problem is not None and problem.exit_code == 4 and problem.http_status == 503
    assert "CUDA build" in problem.message and "NVIDIA driver" in problem.message
    assert "libcuda.so.1 is not on this machine" in problem.message
    assert problem.message.endswith(CPU_REINSTALL)


def test_a_missing_cuda_runtime_and_any_other_load_failure_are_told_apart() -> None:
    runtime = library_error(
        _failed(
            "/v/llama_cpp/lib/libllama.so",
            "libcublas.so.13: cannot open shared object file: No such file or directory",
        )
    )
    assert runtime is not None and "CUDA runtime it was built with (libcublas.so.13)" in (
        runtime.message
    )
    other = library_error(_failed("/v/llama_cpp/lib/libllama.so", "undefined symbol: foo"))
    assert other is not None and "does not load (undefined symbol: foo)" in other.message
    assert "./scripts/install.sh" in other.message


def test_only_llama_cpps_own_load_failure_counts_even_when_wrapped() -> None:
    assert library_error(RuntimeError("something else broke")) is None
    assert library_error(_failed("/usr/lib/libsomething.so", NO_DRIVER)) is None
    try:
        try:
            raise _failed("/v/llama_cpp/lib/libllama.so", NO_DRIVER)
        except RuntimeError as inner:
            raise ModelLoadError("could not load gemma") from inner
    except ModelLoadError as outer:
        found = library_error(outer)
    assert found is not None and "NVIDIA driver" in found.message


def _edgedesk(*args: str, fake: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "desktop", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "EDGEDESK_HOME": str(home), "PYTHONPATH": str(fake)},
    )


@pytest.mark.parametrize(
    "args",
    [("--version",), ("doctor",), ("doctor", "--json"), ("run", "MODEL", "Hello", "--raw")],
    ids=["version", "doctor", "doctor-json", "run"],
)
def test_every_command_says_one_line_not_a_traceback_or_a_bug(
    args: tuple[str, ...], tiny_chat: Path, tmp_path: Path
) -> None:
    fake = _fake_llama_cpp(tmp_path)
    home = tmp_path / "home"
    done = _edgedesk(*(str(tiny_chat) if a == "MODEL" else a for a in args), fake=fake, home=home)
    assert done.returncode == 4, done.stderr
    assert done.stderr.splitlines() == [
        "edgedesk: error: llama.cpp cannot start: this llama-cpp-python is a CUDA build and "
        "needs the NVIDIA driver, but libcuda.so.1 is not on this machine. Install the NVIDIA "
        "driver (nvidia-smi must list the GPU), or reinstall for the CPU: "
        "EDGEDESK_GPU=cpu ./scripts/install.sh"
    ]
    assert not list(home.rglob("crash.log"))  # not reported as a bug of ours


def test_a_model_load_says_the_library_cannot_start_not_that_the_model_is_bad(
    tiny_chat: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The window and the server load models through the scheduler, not the command line.
    # The engine's modules are already imported here; the next import of llama_cpp (the
    # engine's one door to it, desktop.engine._llama_cpp) fails.
    import desktop.engine._hardware.devices
    import desktop.engine._loader

    assert desktop.engine._hardware.devices.list_backends()
    monkeypatch.delitem(sys.modules, "llama_cpp")
    monkeypatch.delitem(sys.modules, "desktop.engine._llama_cpp")
    monkeypatch.syspath_prepend(str(_fake_llama_cpp(tmp_path)))
    ctx = build_context(cli_settings={"engine.preload": [str(tiny_chat)]}, policy=NoPolicy())
    try:
        [message] = ctx.preload().values()
    finally:
        ctx.close()
    assert message == str(library_error(_failed("x/llama_cpp/lib/libllama.so", NO_DRIVER)))
    assert isinstance(library_error(_failed("llama_cpp/libllama.so", NO_DRIVER)), EngineUnavailable)
