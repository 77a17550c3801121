"""Two launches over one config folder: the second hands over to the first (in-process)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from desktop.ui.shell.single_instance import SingleInstance

pytestmark = pytest.mark.qt

LATER = """
import sys
from pathlib import Path
from PySide6.QtCore import QCoreApplication
from desktop.ui.shell.single_instance import SingleInstance
app = QCoreApplication([])
sys.exit(0 if SingleInstance(Path(sys.argv[1])).hand_over(sys.argv[2], 20) else 1)
"""


def test_the_second_claim_fails_and_hands_its_file_to_the_first(qtbot, tmp_path: Path) -> None:
    config = tmp_path / "home" / "config"
    first = SingleInstance(config)
    assert first.claim()
    second = SingleInstance(config)
    assert not second.claim()  # the same folder: one window
    elsewhere = SingleInstance(tmp_path / "other" / "config")
    assert elsewhere.claim()  # another EDGEDESK_HOME is another app's data: allowed
    elsewhere.release()

    # The later launch: another process, blocked on its socket until the first answers.
    with qtbot.waitSignal(first.requested, timeout=30_000) as asked:
        later = subprocess.Popen(
            [sys.executable, "-c", LATER, str(config), "/models/x.gguf"],
            env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        )
    assert asked.args == ["/models/x.gguf"]
    assert later.wait(timeout=30) == 0  # it heard the first say it will

    first.release()  # the first window closed: a later launch is the window now
    assert second.claim()
    second.release()


def test_a_lock_left_by_a_crashed_window_does_not_block_the_next(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.mkdir()
    # A lock file naming a process that no longer runs (pid 2**22 + 1 exceeds pid_max).
    (config / "window.lock").write_text(
        f"{2**22 + 1}\nedgedesk\n{__import__('socket').gethostname()}\n"
    )
    instance = SingleInstance(config)
    assert instance.claim()
    instance.release()
