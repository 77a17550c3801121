"""``edgedesk serve`` says on its start-up line where local models will run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.fixtures.children import free_port


def test_the_start_up_line_names_where_models_run(tiny_chat: Path) -> None:
    cmd = [
        sys.executable,
        "-m",
        "desktop",
        "serve",
        "--model",
        str(tiny_chat),
        "--no-auth",
        "--port",
        str(free_port()),
    ]
    serve = subprocess.Popen(
        cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=dict(os.environ)
    )
    try:
        assert serve.stderr is not None
        lines = []
        for line in serve.stderr:  # blocks until the server writes its next line
            lines.append(line)
            if line.startswith("Serving"):
                break
        start_up = lines[-1] if lines else ""
        # This CPU build of llama.cpp offloads nothing: the named model runs on the CPU.
        assert "; tiny-chat: CPU only;" in start_up, "".join(lines)
    finally:
        serve.terminate()
        serve.wait(30)
        if serve.stderr is not None:
            serve.stderr.close()


def test_with_no_model_named_the_line_says_where_any_would_run() -> None:
    cmd = [sys.executable, "-m", "desktop", "serve", "--no-auth", "--port", str(free_port())]
    serve = subprocess.Popen(
        cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=dict(os.environ)
    )
    try:
        assert serve.stderr is not None
        start_up = next((line for line in serve.stderr if line.startswith("Serving")), "")
        assert "; local models run on the CPU only;" in start_up
    finally:
        serve.terminate()
        serve.wait(30)
        if serve.stderr is not None:
            serve.stderr.close()
