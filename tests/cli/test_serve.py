"""``edgedesk serve``'s flags: the settings docs/api.md names, and a console log per request."""

from __future__ import annotations

import logging
import os
import queue
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest

from desktop.base.errors import InvalidRequest
from desktop.cli import build_parser
from desktop.cli.serve import _overrides, configure_logging
from desktop.engine._scheduler import Scheduler
from desktop.engine._types import ModelSpec
from tests.conftest import wait_until
from tests.fixtures.children import free_port


def _flags(*argv: str) -> dict[str, object]:
    return _overrides(build_parser().parse_args(["serve", *argv]))


def test_flags_override_the_server_settings_by_their_documented_names() -> None:
    assert _flags() == {}
    assert _flags(
        "--require-key",
        "--allowed-origins",
        "http://a.test, http://b.test",
        "--max-body-bytes",
        "4096",
        "--max-tokens-limit",
        "64",
    ) == {
        "server.require_key": True,
        "server.allowed_origins": ["http://a.test", "http://b.test"],
        "server.max_body_bytes": 4096,
        "server.max_tokens_limit": 64,
    }
    assert _flags("--no-auth", "--allowed-origins", "") == {
        "server.require_key": False,
        "server.allowed_origins": [],
    }
    with pytest.raises(SystemExit):  # argparse: not both
        _flags("--no-auth", "--require-key")
    with pytest.raises(InvalidRequest, match="--max-body-bytes 10 is too small"):
        _flags("--max-body-bytes", "10")
    with pytest.raises(InvalidRequest, match="--max-tokens-limit must be at least 1"):
        _flags("--max-tokens-limit", "0")


def test_debug_level_shows_the_engines_lines_and_warning_hides_requests(
    capsys: pytest.CaptureFixture[str],
) -> None:
    logger = logging.getLogger("edgedesk")
    before = (logger.level, list(logger.handlers), logger.propagate)
    # A library's handler on the root logger, as the MCP SDK adds one when /mcp is built.
    library = logging.StreamHandler(sys.stderr)
    logging.getLogger().addHandler(library)
    try:
        configure_logging("warning")
        logging.getLogger("edgedesk.access").info("req_hidden")
        configure_logging("debug")
        configure_logging("debug")  # twice: still one handler, one line per record
        # The scheduler's own line for a load (a stand-in engine: no llama.cpp needed).
        engine = SimpleNamespace(parallel=2, close=lambda: None, report="loaded")
        scheduler = Scheduler(
            lambda _spec: engine,  # type: ignore[arg-type,return-value]
            lambda ref: ModelSpec(Path(f"/{ref}.gguf"), ref),
        )
        assert scheduler.load("tiny") == "loaded"
        err = capsys.readouterr().err
    finally:
        logging.getLogger().removeHandler(library)
        for handler in logger.handlers[len(before[1]) :]:
            logger.removeHandler(handler)
        logger.setLevel(before[0])
        logger.propagate = before[2]
    assert "req_hidden" not in err
    assert err.count("load tiny: estimated 0 MiB") == 1  # printed once, not twice
    assert "DEBUG edgedesk.engine: load tiny: estimated 0 MiB" in err
    assert re.search(r"DEBUG edgedesk\.engine: load tiny: ready in [\d.]+ s, 2 slots", err)


@contextmanager
def _serving(home: Path, *argv: str) -> Iterator[tuple[str, queue.Queue[str]]]:
    """A real ``edgedesk serve --no-auth ARGV`` process on a free port; its URL and its
    stderr lines (from the one after its "Serving" line)."""
    port = free_port()
    env = {**os.environ, "EDGEDESK_HOME": str(home)}
    process = subprocess.Popen(
        [sys.executable, "-m", "desktop", "serve", "--no-auth", "--port", str(port), *argv],
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.put(line.rstrip("\n"))
        lines.put("<eof>")

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    with process:
        try:
            while "Serving" not in (line := lines.get(timeout=60)):
                assert line != "<eof>", "the server stopped before serving"
            yield f"http://127.0.0.1:{port}", lines
        finally:
            process.terminate()
            process.wait(timeout=30)
            reader.join(timeout=30)  # it read to the end: the pipe can close


@pytest.fixture
def running(tmp_path: Path, tiny_chat: Path) -> Iterator[tuple[str, queue.Queue[str]]]:
    """A real ``edgedesk serve --log-level info`` process; its URL and its stderr lines."""
    with _serving(
        tmp_path / "home",
        "--model",
        str(tiny_chat),
        "--log-level",
        "info",
        "--max-tokens-limit",
        "3",
        "--allowed-origins",
        "http://ide.test",
        "--max-body-bytes",
        "2048",
    ) as served:
        yield served


def _loaded(url: str) -> list[str]:
    models: list[str] = httpx.get(f"{url}/health", timeout=60).json()["loaded_models"]
    return models


def test_a_named_model_is_loaded_before_its_first_request(tmp_path: Path, tiny_chat: Path) -> None:
    # As llama-server: the first request after a start does not wait for a load.
    with _serving(tmp_path / "home", "--model", str(tiny_chat)) as (url, _lines):
        assert wait_until(lambda: _loaded(url) == ["tiny-chat"], 60, "the preload")


def test_no_preload_loads_a_model_on_its_first_request(tmp_path: Path, tiny_chat: Path) -> None:
    with _serving(tmp_path / "home", "--model", str(tiny_chat), "--no-preload") as (url, _lines):
        assert _loaded(url) == []
        reply = httpx.post(
            f"{url}/v1/chat/completions",
            timeout=60,
            json={
                "model": "tiny-chat",
                "max_tokens": 2,
                "messages": [{"role": "user", "content": "hi"}],
            },
        )
        assert reply.status_code == 200
        assert _loaded(url) == ["tiny-chat"]


def test_a_model_that_fails_to_load_at_start_is_said_and_the_server_goes_on(
    tmp_path: Path, tiny_chat: Path
) -> None:
    bad = tmp_path / "broken.gguf"
    # Whole and well formed, so the start accepts it; llama.cpp knows no "llamb" models.
    data = bytearray(tiny_chat.read_bytes())
    at = data.index(b"general.architecture") + len(b"general.architecture") + 4 + 8
    assert data[at : at + 5] == b"llama"
    data[at : at + 5] = b"llamb"
    bad.write_bytes(data)
    with _serving(tmp_path / "home", "--model", str(bad), "--model", str(tiny_chat)) as (
        url,
        lines,
    ):
        line = _line_with(lines, "was not loaded at start")
        assert line.startswith("edgedesk: broken was not loaded at start: ")
        assert wait_until(lambda: _loaded(url) == ["tiny-chat"], 60, "the second preload")
        reply = httpx.post(
            f"{url}/v1/chat/completions",
            timeout=60,
            json={"model": "broken", "messages": [{"role": "user", "content": "hi"}]},
        )
        assert reply.status_code != 200 and reply.json()["error"]["message"]


def _line_with(lines: queue.Queue[str], needle: str) -> str:
    while needle not in (line := lines.get(timeout=60)):
        assert line != "<eof>"
    return line


def test_serve_prints_a_line_per_request_and_applies_its_flags(
    running: tuple[str, queue.Queue[str]],
) -> None:
    url, lines = running
    reply = httpx.post(
        f"{url}/v1/chat/completions",
        timeout=60,
        headers={"Origin": "http://ide.test"},
        json={
            "model": "tiny-chat",
            "max_tokens": 32000,
            "messages": [{"role": "user", "content": "hello"}],
        },
    )
    assert reply.status_code == 200
    assert reply.json()["usage"]["completion_tokens"] <= 3  # --max-tokens-limit
    assert reply.headers["access-control-allow-origin"] == "http://ide.test"
    line = _line_with(lines, reply.headers["x-request-id"])
    assert re.search(
        r"INFO edgedesk\.access: req_\w+ POST /v1/chat/completions "
        r"model=tiny-chat status=200 tokens=\d+\+\d+ \d+ms$",
        line,
    ), line
    too_big = httpx.post(
        f"{url}/v1/chat/completions",
        content=b"x" * 4096,
        headers={"Content-Type": "application/json"},
    )
    assert too_big.status_code == 413  # --max-body-bytes
    line = _line_with(lines, too_big.headers["x-request-id"])
    assert line.endswith("error=request_too_large")


def test_a_newline_in_the_model_cannot_forge_an_access_log_line(
    running: tuple[str, queue.Queue[str]],
) -> None:
    url, lines = running
    forged = "tiny-chat\n2026-12-05 00:00:00 INFO edgedesk.access: req_forged GET /health"
    reply = httpx.post(
        f"{url}/v1/chat/completions",
        timeout=60,
        json={"model": forged + "\x1b[2K\u202e", "messages": [{"role": "user", "content": "hi"}]},
    )
    # No such model (or, validated first, not a model name at all): logged either way.
    assert reply.status_code in (400, 404)
    seen = [_line_with(lines, reply.headers["x-request-id"])]
    if "model=tiny-chat" in seen[0]:
        assert "model=tiny-chat\\x0a2026-12-05 00:00:00 INFO edgedesk.access: req_forged" in seen[0]
        assert "\\x1b[2K\\u202e status=" in seen[0]  # nor can it redraw the terminal
    # Every line on stderr up to the next request's is the server's own: none forged.
    health = httpx.get(f"{url}/health", timeout=60).headers["x-request-id"]
    while health not in seen[-1]:
        seen.append(lines.get(timeout=60))
        assert seen[-1] != "<eof>"
    assert not [line for line in seen if line.startswith("2026-12-05 00:00:00")], seen
