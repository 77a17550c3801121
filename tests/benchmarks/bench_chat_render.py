"""How long one streamed refresh of a chat answer blocks the window, with code blocks.

Streams a ~3,500-character answer (prose, Python, JavaScript and shell fences) into the
last bubble of a transcript, a few characters per refresh as the chat view does, and
times each refresh including Qt's layout and paint. Baseline, same run and same
transcript: the same text in a word-wrapped ``QLabel`` with Qt's own Markdown renderer
(what the window used before code was coloured; monospace only).

Run on a quiet machine:  QT_QPA_PLATFORM=offscreen .venv/bin/python tests/benchmarks/bench_chat_render.py
Not part of the default test run (pytest collects only test_*.py files).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from desktop.ui.shell.pyside_fixes import make_none_immortal

make_none_immortal()

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QApplication, QLabel, QScrollArea, QVBoxLayout, QWidget  # noqa: E402

from desktop.chat._conversation import Turn  # noqa: E402
from desktop.ui.chat.message import MessageWidget  # noqa: E402
from desktop.ui.common.look import apply_theme  # noqa: E402

STEP = 12  # characters per refresh: about three tokens


def answer() -> str:
    """Prose around three fenced blocks, like a coding answer."""
    python = "\n".join(
        f"def f{i}(x: int) -> str:\n    return str(x * {i}) + 'abc'  # {i}" for i in range(12)
    )
    script = "\n".join(
        f"const v{i} = await fetch('/api/{i}').then(r => r.json());" for i in range(12)
    )
    shell = "\n".join(f'echo "step {i}" && ls -la /tmp/{i} | grep -v x' for i in range(10))
    prose = "Here is **some** prose with `inline code` and a [link](http://x).\n\n" * 6
    return (
        f"{prose}```python\n{python}\n```\n{prose}```javascript\n{script}\n```\n"
        f"{prose}```bash\n{shell}\n```\n{prose}"
    )


def transcript(app: QApplication) -> tuple[QScrollArea, QVBoxLayout]:
    """A scrolling column holding six earlier messages."""
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.resize(900, 700)
    column = QWidget()
    layout = QVBoxLayout(column)
    area.setWidget(column)
    for number in range(6):
        earlier = Turn("user" if number % 2 == 0 else "assistant", "An earlier message. " * 8)
        layout.addWidget(MessageWidget(number, earlier, last=False))
    area.show()
    app.processEvents()
    return area, layout


def stream(app: QApplication, area: QScrollArea, show: Callable[[str], None]) -> list[float]:
    """Milliseconds per refresh (render, layout, paint) while the answer grows."""
    text, times = answer(), []
    for end in range(STEP, len(text) + STEP, STEP):
        start = time.perf_counter()
        show(text[:end])
        app.processEvents()
        area.verticalScrollBar().setValue(area.verticalScrollBar().maximum())
        app.processEvents()
        times.append((time.perf_counter() - start) * 1000)
    return sorted(times)


def summary(times: list[float]) -> str:
    """Median, p95 and max of sorted timings."""
    return (
        f"median {statistics.median(times):5.1f} ms, p95 {times[int(len(times) * 0.95)]:5.1f}"
        f" ms, max {times[-1]:5.1f} ms"
    )


def main() -> None:
    """Print both figures and their ratio."""
    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)
    apply_theme(app, "light")

    area, layout = transcript(app)
    label = QLabel()
    label.setTextFormat(Qt.TextFormat.MarkdownText)
    label.setWordWrap(True)
    layout.addWidget(label)
    baseline = stream(app, area, label.setText)
    area.close()

    area, layout = transcript(app)
    turn = Turn("assistant", "")
    bubble = MessageWidget(6, turn, last=True)
    layout.addWidget(bubble)

    def show(text: str) -> None:
        turn.content = text
        bubble.refresh()

    ours = stream(app, area, show)
    print(f"answer: {len(answer())} characters, {len(ours)} refreshes of {STEP} characters")
    print(f"Qt Markdown QLabel (no colours): {summary(baseline)}")
    print(f"EdgeDesk coloured answer:        {summary(ours)}")
    print(
        f"ratio (median, EdgeDesk / baseline): "
        f"{statistics.median(ours) / statistics.median(baseline):.2f}"
    )


if __name__ == "__main__":
    main()
