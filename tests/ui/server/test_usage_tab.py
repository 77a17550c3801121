"""The Server screen's Usage tab draws a scripted day, in English and Chinese, light and
dark; the request list shows relative times and filters; policy off is said."""

from __future__ import annotations

import csv
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QApplication, QHeaderView

from desktop.base.config import NoPolicy
from desktop.policy._sources import MachinePolicy
from desktop.root.context import AppContext, build_context
from desktop.server._metrics import AccessRecord
from desktop.store import WINDOW_GROUP
from desktop.store._usage import UsageRow
from desktop.ui.common.look import apply_theme, install_translator
from desktop.ui.server.request_list import log_line, relative_time
from desktop.ui.shell.main_window import MainWindow

pytestmark = pytest.mark.qt
HOUR = 3600.0
# Where the tab's screenshots go when asked (USAGE_SHOTS=/work/shots).
SHOTS = os.environ.get("USAGE_SHOTS")


def _scripted_day(ctx: AppContext, now: float) -> int:
    """A day of three tools on three keys (and the window's own chats); returns requests."""
    rows = []
    for h in range(24):
        # Five minutes into each hour: a range read a moment later still holds the first.
        start = now - (24 - h) * HOUR + 300
        busy = 3 + (h % 8)
        for i in range(busy):
            rows.append(
                UsageRow(
                    start + i * 60,
                    "codex",
                    "Codex",
                    "glm-4-9b",
                    "/v1/responses",
                    200,
                    prompt_tokens=1200,
                    completion_tokens=300,
                    ttft_ms=400 + 40 * i,
                    total_ms=3000 + 300 * i,
                )
            )
        for i in range(h % 4):
            rows.append(
                UsageRow(
                    start + 30 + i * 90,
                    "claude",
                    "Claude Code",
                    "kimi-k2",
                    "/v1/messages",
                    500 if i == 2 else 200,
                    error_code="engine_failed" if i == 2 else None,
                    prompt_tokens=4000,
                    completion_tokens=0 if i == 2 else 500,
                    ttft_ms=900.0,
                    total_ms=9000.0 + 500 * i,
                )
            )
        rows.append(
            UsageRow(
                start + 50,
                None,
                "EdgeDesk",
                "glm-4-9b",
                "window",
                200,
                prompt_tokens=300,
                completion_tokens=200,
                ttft_ms=500.0,
                total_ms=2500.0,
            )
        )
        rows.append(
            UsageRow(
                start + 70,
                "notebook",
                "openai-python",
                "bge-m3",
                "/v1/embeddings",
                200,
                prompt_tokens=800,
                total_ms=40.0,
            )
        )
    ctx.usage_store.add(rows)
    return len(rows)


def _shot(win: MainWindow, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        assert win.grab().save(str(Path(SHOTS) / name))


def _open_usage(qtbot, ctx: AppContext) -> MainWindow:
    win = MainWindow(ctx)
    qtbot.addWidget(win)
    win.resize(1280, 860)
    win.show()
    win.show_page("server")
    assert win.server._usage is None  # made when first shown
    win.server.tabs.setCurrentIndex(1)
    qtbot.waitUntil(lambda: win.server.usage.slots is not None, timeout=10_000)
    return win


def test_usage_tab_draws_a_scripted_day_and_exports_it(
    qtbot, tmp_path: Path, context: AppContext
) -> None:
    now = time.time()
    sent = _scripted_day(context, now)
    win = _open_usage(qtbot, context)
    tab = win.server.usage
    slots = tab.slots
    assert slots is not None
    # Every request of the day is in a bar, stacked by key (the window's chats apart
    # from requests without a key).
    assert sum(slots.totals) == sent
    assert set(slots.groups) == {"codex", "claude", "notebook", WINDOW_GROUP}
    assert len(tab.requests_plot.getPlotItem().items) == len(slots.groups)
    assert tab.table.rowCount() == 4 and tab.table.item(0, 0).text() == "codex"
    assert tab.table.cellWidget(0, 8) is not None  # the sparkline
    assert tab.summary.text() == f"{sent} requests, {sum(g.error_count for g in tab.groups)} errors"
    # Hovering a bar tells its exact numbers.
    busiest = max(range(len(slots.totals)), key=lambda i: slots.totals[i])
    x = slots.starts[busiest] + HOUR / 2
    told = tab.describe_slot(tab.requests_plot, x)
    assert f"Total: {slots.totals[busiest]}" in told
    assert f"codex: {slots.requests['codex'][busiest]}" in told
    assert "p50:" in tab.describe_slot(tab.latency_plot, x)
    assert "failed" in tab.describe_slot(tab.errors_plot, x) or "No requests" in told
    _shot(win, "usage-en.png")

    # Live: a request stored while the tab is open is drawn without touching anything.
    context.record_usage(
        UsageRow(time.time(), "codex", "Codex", "glm-4-9b", "/v1/responses", 200, total_ms=80.0)
    )
    qtbot.waitUntil(
        lambda: tab.slots is not None and sum(tab.slots.totals) == sent + 1, timeout=20_000
    )
    sent += 1

    tab.by_box.setCurrentIndex(tab.by_box.findData("model"))
    assert {g.name for g in tab.groups} == {"glm-4-9b", "kimi-k2", "bge-m3"}
    tab.range_box.setCurrentIndex(tab.range_box.findData("7d"))
    assert tab.slots is not None and sum(tab.slots.totals) == sent

    out = tmp_path / "usage.csv"
    tab.export(out)
    rows = list(csv.DictReader(out.read_text(encoding="utf-8").splitlines()))
    assert {r["group"]: int(r["requests"]) for r in rows} == {
        g.name: g.requests for g in tab.groups
    }

    # Dark theme: the charts take the palette's colours.
    app = QApplication.instance()
    apply_theme(app, "dark")
    try:
        tab.refresh()
        background = tab.requests_plot.backgroundBrush().color()
        assert background.lightness() < 128
        _shot(win, "usage-en-dark.png")
    finally:
        apply_theme(app, "light")
    win.close()


def test_usage_tab_in_chinese(qtbot) -> None:
    app = QApplication.instance()
    translator = install_translator(app, "zh_CN")
    assert translator is not None
    try:
        ctx = build_context(policy=NoPolicy())
        _scripted_day(ctx, time.time())
        win = _open_usage(qtbot, ctx)
        tab = win.server.usage
        assert win.server.tabs.tabText(1) == "用量"
        assert tab.range_box.itemText(0) == "最近 24 小时"
        assert tab.export_button.text() == "导出 CSV…"
        assert "请求" in tab.summary.text()
        assert relative_time("2026-01-01T00:00:00+00:00", time.time()).count("-") == 2
        iso = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(time.time() - 130))
        row = log_line(_record("ide", "glm", 200, iso))
        assert row.startswith("2 分钟前") and "5→2 个词元" in row and "密钥 ide" in row
        _shot(win, "usage-zh.png")
        win.close()
    finally:
        app.removeTranslator(translator)


def test_the_window_opens_without_importing_pyqtgraph() -> None:
    # About a second of imports: paid when the Usage tab is first shown, not at start.
    code = "import sys, desktop.ui.shell.main_window; print('pyqtgraph' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "False"


def test_policy_off_is_said_on_the_tab(qtbot) -> None:
    ctx = build_context(policy=MachinePolicy(origin="test", values={"CollectUsage": False}))
    win = _open_usage(qtbot, ctx)
    notice = win.server.usage.notice
    assert notice.isVisible() and "policy CollectUsage" in notice.text()
    win.close()


def _record(key: str, model: str, status: int, when: str) -> AccessRecord:
    return AccessRecord(when, "req", key, "POST", "/v1/chat/completions", status, model, 5, 2)


def test_request_list_shows_relative_times_and_filters(qtbot, context: AppContext) -> None:
    win = MainWindow(context)
    qtbot.addWidget(win)
    log = win.server.log
    now = time.time()
    iso = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(now - 130))
    log.add(_record("ide", "glm", 200, iso))
    log.add(_record("ci", "kimi", 429, iso))
    assert "2 min ago" in log.toPlainText() and "key ide" in log.toPlainText()
    log.filter_box.setText("429")
    assert "ci" in log.toPlainText() and "key ide" not in log.toPlainText()
    log.filter_box.setText("GLM")
    assert log.toPlainText().count("\n") == 0 and "key ide" in log.toPlainText()
    log.filter_box.clear()
    assert "key ci" in log.toPlainText() and "key ide" in log.toPlainText()
    assert "just now" in log_line(_record("x", "m", 200, iso), now - 100)
    win.close()


def test_request_list_shows_the_newest_first_and_earlier_runs_after_a_restart(
    qtbot, context: AppContext
) -> None:
    # What an earlier run left in the usage store (metadata only); and a chat of the
    # window's own, which is no request to the server.
    now = time.time()
    context.usage_store.add(
        [
            UsageRow(now - 600, "ci", "curl", "kimi", "/v1/messages", 429, "rate_limited"),
            UsageRow(
                now - 65,
                "ide",
                "Codex",
                "glm",
                "/v1/responses",
                200,
                prompt_tokens=12,
                completion_tokens=34,
                total_ms=1500.0,
            ),
            UsageRow(now - 30, None, "EdgeDesk", "glm", "window", 200),
        ]
    )
    win = MainWindow(context)
    qtbot.addWidget(win)
    win.show()
    win.show_page("server")
    log = win.server.log
    # Not "No requests yet": the key was used a minute ago, before this start.
    qtbot.waitUntil(lambda: len(log.toPlainText().splitlines()) == 2, timeout=10_000)
    lines = log.toPlainText().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("1 min ago  /v1/responses  200  glm  12→34 tokens  1500 ms")
    assert lines[0].endswith("key ide")
    assert lines[1].startswith("10 min ago  /v1/messages  429  kimi") and "key ci" in lines[1]
    # A request of this run goes on top, over the earlier ones.
    iso = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(time.time() - 5))
    log.add(_record("live", "glm", 200, iso))
    lines = log.toPlainText().splitlines()
    assert [line.rsplit("key ", 1)[1] for line in lines] == ["live", "ide", "ci"]
    assert lines[0].startswith("just now  POST /v1/chat/completions  200")
    log.filter_box.setText("429")
    assert log.toPlainText().splitlines() == [lines[2]]
    log.filter_box.clear()
    assert log.toPlainText().splitlines() == lines
    win.close()


def _walked_errors(ctx: AppContext, now: float) -> None:
    """The rows behind the last walk's clipped header: errors of long kinds."""
    ctx.usage_store.add(
        [
            UsageRow(now - 300, None, "curl", "gemma", "/v1/chat/completions", 400, kind)
            for kind in ("chat_template_missing", "invalid_api_key", "context_length_exceeded")
        ]
        + [UsageRow(now - 200, "walker", "curl", "gemma", "/v1/chat/completions", 200)]
        + [
            UsageRow(
                now - 100,
                "walker",
                "curl",
                "gemma",
                "/v1/chat/completions",
                400,
                "context_length_exceeded",
            )
        ]
    )


def _inked_share(table, item) -> float:
    """The share of a cell's width between its first and last drawn (dark) pixel."""
    rect = table.visualItemRect(item)
    image = table.viewport().grab(rect).toImage()
    columns = [
        x
        for x in range(image.width())
        if any(image.pixelColor(x, y).lightness() < 128 for y in range(image.height()))
    ]
    return (columns[-1] - columns[0]) / image.width() if columns else 0.0


@pytest.mark.parametrize("size", [(1366, 768), (1024, 700)])
def test_every_usage_table_header_fits_a_laptop_window(
    qtbot, context: AppContext, size: tuple[int, int]
) -> None:
    _walked_errors(context, time.time())
    win = MainWindow(context)
    qtbot.addWidget(win)
    win.resize(*size)
    win.show()
    win.show_page("server")
    win.server.tabs.setCurrentIndex(1)
    tab = win.server.usage
    qtbot.waitUntil(lambda: tab.table.rowCount() == 2, timeout=10_000)
    QApplication.processEvents()
    header = tab.table.horizontalHeader()
    names = [tab.table.horizontalHeaderItem(i).text() for i in range(header.count())]
    assert names[-1] == "Trend"
    for i, name in enumerate(names):
        # Each title whole in its section, and the last one on screen without scrolling.
        assert header.sectionSize(i) >= header.sectionSizeFromContents(i).width(), name
    right = header.sectionViewportPosition(header.count() - 1) + header.sectionSize(
        header.count() - 1
    )
    assert right <= header.viewport().width(), f"{size}: the Trend column is cut off"
    # The long list of error kinds gives way, whole on hover.
    errors = tab.table.item(0, 2)
    assert "chat_template_missing" in errors.toolTip() and "invalid_api_key" in errors.toolTip()
    # One kind of error is named once, without its count again.
    lone = tab.table.item(1, 2)
    assert lone.text() == "1 (context_length_exceeded)"
    # Narrower than its text (the walk's real fonts), it shows as much as fits on one
    # line: wrapped, it read "1 …".
    header.setSectionResizeMode(2, QHeaderView.ResizeMode.Interactive)
    header.resizeSection(2, 140)
    QApplication.processEvents()
    assert _inked_share(tab.table, lone) > 0.6
    _shot(win, f"usage-table-{size[0]}.png")
    win.close()


ENGLISH_DATES = re.compile(
    r"\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec|Mon|Tue|Wed|Thu|Fri|Sat|Sun)\b"
)


def _axis_labels(plot) -> list[str]:
    """The labels the chart's time axis draws, as it would paint them now."""
    axis = plot.getPlotItem().getAxis("bottom")
    image = QImage(8, 8, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        _axis, _ticks, texts = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [text for _rect, _flags, text in texts]


def test_chart_dates_are_in_the_windows_language(qtbot, chinese, context: AppContext) -> None:
    _scripted_day(context, time.time())
    win = _open_usage(qtbot, context)
    tab = win.server.usage
    labels: list[str] = []
    for key in ("24h", "7d", "30d"):
        tab.range_box.setCurrentIndex(tab.range_box.findData(key))
        QApplication.processEvents()
        labels += _axis_labels(tab.requests_plot)
    assert labels, "the time axis draws labels"
    assert [t for t in labels if ENGLISH_DATES.search(t)] == [], labels
    # The day of a 24 h chart and the month of a 30 d one, named in Chinese.
    assert any("周" in t for t in labels) and any("月" in t for t in labels), labels
    _shot(win, "usage-zh-dates.png")
    win.close()
