"""No file left open at exit: a process that loads a model ends without a ResourceWarning.

A warning Python gives at interpreter exit (or in a ``__del__``) cannot raise, so the
suite's ``filterwarnings = ["error"]`` never sees it; it was printed after test runs as
"ResourceWarning: unclosed file <... name='/dev/null'>" (llama-cpp-python's two module
files, closed by ``desktop.engine._llama_cpp``). A child process run with ``-X dev -W
error::ResourceWarning`` prints any such warning on its stderr: here it must print none.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize(
    "args",
    [["--version"], ["run", "{model}", "hello", "--max-tokens", "2", "--temperature", "0"]],
    ids=["version", "run"],
)
def test_a_command_that_loads_llama_cpp_leaves_no_file_open(
    args: list[str], tiny_chat: Path, edgedesk_home: Path
) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-X",
            "dev",
            "-W",
            "error::ResourceWarning",
            "-m",
            "desktop",
            *(a.format(model=tiny_chat) for a in args),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "EDGEDESK_HOME": str(edgedesk_home)},
    )
    assert done.returncode == 0, done.stderr
    assert "ResourceWarning" not in done.stderr, done.stderr
