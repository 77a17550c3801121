"""The Server screen's Usage tab: requests, tokens, latency and errors over time, as charts.

Drawn with pyqtgraph (QtCharts is not in PySide6-Essentials) from the usage store's
hourly buckets (``UsageStore.series`` and ``summary``: a month is a few thousand rows,
read on the window's thread in milliseconds). Stacked by key or model; hovering a chart
shows the exact values of the slot under the pointer; refreshed as the recorder stores
new rows while the server runs. Export writes the table as CSV, as ``edgedesk stats
--csv`` does.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pyqtgraph as pg
from PySide6.QtCore import QObject, QPointF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from desktop.store import WINDOW_GROUP, SeriesPoint, UsageGroup, csv_text, percentile
from desktop.ui.common.text_fit import FitLabel
from desktop.ui.server.date_axis import LocaleDateAxis

if TYPE_CHECKING:
    from desktop.base.config import EffectiveSettings
    from desktop.store import UsageRecorder, UsageStore


class UsageSource(Protocol):
    """What the Usage tab reads (asked each time: settings applied meanwhile count)."""

    @property
    def effective(self) -> EffectiveSettings:
        """The settings in force and which of them are locked."""

    @property
    def usage_store(self) -> UsageStore:
        """The API's usage rows."""

    def usage_sink(self) -> UsageRecorder | None:
        """The recorder while usage is collected, else None."""


HOUR = 3600.0
# Range -> (seconds, slot width): 24 bars of an hour, 28 of six hours, 30 of a day.
RANGES: dict[str, tuple[float, float]] = {
    "24h": (24 * HOUR, HOUR),
    "7d": (7 * 24 * HOUR, 6 * HOUR),
    "30d": (30 * 24 * HOUR, 24 * HOUR),
}
# Colour-blind-safe (Okabe-Ito), readable on light and dark backgrounds alike.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#999999")
MAX_STACKED = 7  # more groups than this: the rest are summed as "other"
REFRESH_MS = 1500  # new rows while the server runs: redrawn at most this often
ERRORS_COLUMN = 2  # the table's one column that gives way (its text elided, whole on hover)
TREND_COLUMN = 8  # the sparklines: a fixed width, never narrower than its header
SPARK_WIDTH = 96


@dataclass
class Slots:
    """The series of one range laid out for drawing: slot starts, and per group a column."""

    starts: list[float]
    groups: list[str]
    requests: dict[str, list[int]]
    tokens: dict[str, list[int]]
    p50: list[float | None]
    p99: list[float | None]
    error_rate: list[float | None]  # percent; None: no request in the slot
    totals: list[int]


def lay_out(points: Sequence[SeriesPoint], since: float, span: float, step: float) -> Slots:
    """Put ``points`` into the range's slots; the busiest groups first, the rest "other"."""
    start = since - since % HOUR
    n = int(span // step) + 1
    starts = [start + i * step for i in range(n)]
    busy: dict[str, int] = {}
    for p in points:
        busy[p.group] = busy.get(p.group, 0) + p.requests
    ranked = sorted(busy, key=lambda g: (-busy[g], g))
    shown = ranked[:MAX_STACKED]
    other = len(ranked) > MAX_STACKED
    groups = [*shown, "other"] if other else shown
    requests = {g: [0] * n for g in groups}
    tokens = {g: [0] * n for g in groups}
    hists: list[dict[int, int]] = [{} for _ in range(n)]
    errors = [0] * n
    for p in points:
        i = int((p.start - start) // step)
        if not 0 <= i < n:
            continue
        g = p.group if p.group in requests else "other"
        requests[g][i] += p.requests
        tokens[g][i] += p.prompt_tokens + p.completion_tokens
        errors[i] += p.errors
        for bucket, count in p.total.items():
            hists[i][bucket] = hists[i].get(bucket, 0) + count
    totals = [sum(requests[g][i] for g in groups) for i in range(n)]
    return Slots(
        starts,
        groups,
        requests,
        tokens,
        [percentile(h, 0.5) for h in hists],
        [percentile(h, 0.99) for h in hists],
        [errors[i] * 100.0 / totals[i] if totals[i] else None for i in range(n)],
        totals,
    )


class _Bridge(QObject):
    """Carries "rows were stored" from the recorder's thread to the window's."""

    stored = Signal()


class UsageTab(QWidget):
    """Charts and a table of the API's usage; called on the window's thread only."""

    def __init__(
        self,
        context: UsageSource,
        parent: QWidget | None = None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(parent)
        self._context = context
        self._clock = clock
        self._unsubscribe: Callable[[], None] | None = None
        self._slots: Slots | None = None
        self._groups: list[UsageGroup] = []
        self._bridge = _Bridge(self)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(REFRESH_MS)
        self._timer.timeout.connect(self.refresh)
        self._bridge.stored.connect(self._soon)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 8, 0, 0)
        layout.addLayout(self._build_controls())
        self.notice = FitLabel()
        self.notice.setObjectName("Muted")
        layout.addWidget(self.notice)
        grid = QGridLayout()
        self.requests_plot = self._plot(self.tr("Requests"))
        self.tokens_plot = self._plot(self.tr("Tokens"))
        self.latency_plot = self._plot(self.tr("Total time (ms), p50 and p99"))
        self.errors_plot = self._plot(self.tr("Error rate (%)"))
        for i, plot in enumerate(
            (self.requests_plot, self.tokens_plot, self.latency_plot, self.errors_plot)
        ):
            grid.addWidget(plot, i // 2, i % 2)
            self._hover(plot)
        layout.addLayout(grid, 3)
        self.table = QTableWidget(0, 9)
        self.table.setAccessibleName(self.tr("Usage per key or model"))
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        # One line a cell: wrapped, a long list of error kinds showed as "1 …" (its first
        # word, then the elision of the rest) in the walk; on one line, as much as fits.
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        # The list of error kinds can be long: that column gives way, not the sparklines'
        # header (it was cut to "Tre" in a 1366 px window).
        header.setSectionResizeMode(ERRORS_COLUMN, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(TREND_COLUMN, QHeaderView.ResizeMode.Fixed)
        layout.addWidget(self.table, 2)
        self._headers()

    # ------------------------------------------------------------------ building
    def _build_controls(self) -> QHBoxLayout:
        row = QHBoxLayout()
        self.range_box = QComboBox()
        self.range_box.setAccessibleName(self.tr("Time range"))
        for key, label in (
            ("24h", self.tr("Last 24 hours")),
            ("7d", self.tr("Last 7 days")),
            ("30d", self.tr("Last 30 days")),
        ):
            self.range_box.addItem(label, key)
        self.by_box = QComboBox()
        self.by_box.setAccessibleName(self.tr("Group by"))
        self.by_box.addItem(self.tr("By key"), "key")
        self.by_box.addItem(self.tr("By model"), "model")
        self.by_box.addItem(self.tr("By client"), "client")
        self.export_button = QPushButton(self.tr("Export CSV…"))
        self.export_button.setAccessibleName(self.tr("Export the usage table as CSV"))
        self.export_button.clicked.connect(self._ask_export)
        self.summary = QLabel()
        self.range_box.currentIndexChanged.connect(self.refresh)
        self.by_box.currentIndexChanged.connect(self.refresh)
        row.addWidget(self.range_box)
        row.addWidget(self.by_box)
        row.addWidget(self.summary, 1)
        row.addWidget(self.export_button)
        return row

    def _plot(self, title: str) -> Any:
        axis = LocaleDateAxis(orientation="bottom")
        plot = pg.PlotWidget(axisItems={"bottom": axis})
        plot.setMenuEnabled(False)
        plot.setMouseEnabled(x=False, y=False)
        plot.hideButtons()
        plot.setMinimumHeight(150)
        plot.setAccessibleName(title)
        plot.setTitle(title)
        legend = plot.getPlotItem().addLegend(offset=(4, 2), labelTextSize="8pt")
        legend.setColumnCount(4)  # one row over the bars, not a column across them
        # Wide enough for "12000" or "10.5 s" ticks: pyqtgraph hides labels it cannot fit.
        plot.getPlotItem().getAxis("left").setWidth(52)
        return plot

    def _headers(self) -> None:
        by = self.by_box.currentText()
        self.table.setHorizontalHeaderLabels(
            [
                by,
                self.tr("Requests"),
                self.tr("Errors"),
                self.tr("Prompt tokens"),
                self.tr("Completion tokens"),
                self.tr("TTFT p50"),
                self.tr("Total p50 / p99"),
                self.tr("tok/s"),
                self.tr("Trend"),
            ]
        )
        header = self.table.horizontalHeader()
        # Every header whole: the giving-way column no narrower than its own title.
        header.setMinimumSectionSize(header.sectionSizeFromContents(ERRORS_COLUMN).width())
        header.resizeSection(
            TREND_COLUMN, max(SPARK_WIDTH, header.sectionSizeFromContents(TREND_COLUMN).width())
        )

    # ------------------------------------------------------------------ data
    @property
    def range_key(self) -> str:
        """The chosen range: ``24h``, ``7d`` or ``30d``."""
        return str(self.range_box.currentData())

    @property
    def by(self) -> str:
        """The chosen grouping: ``key``, ``model`` or ``client``."""
        return str(self.by_box.currentData())

    @property
    def groups(self) -> list[UsageGroup]:
        """The table's rows as last read."""
        return list(self._groups)

    @property
    def slots(self) -> Slots | None:
        """The charts' data as last drawn."""
        return self._slots

    def showEvent(self, event: QShowEvent) -> None:
        """Read and draw when shown; from then on, redraw as new rows are stored."""
        self._listen()
        self.refresh()
        super().showEvent(event)

    def _listen(self) -> None:
        if self._unsubscribe is not None:
            return
        sink = self._context.usage_sink()
        if sink is not None:
            self._unsubscribe = sink.subscribe(lambda _batch: self._bridge.stored.emit())

    def _soon(self) -> None:
        if self.isVisible() and not self._timer.isActive():
            self._timer.start()

    def refresh(self) -> None:
        """Read the chosen range again and redraw the charts and the table."""
        self._say_if_off()
        span, step = RANGES[self.range_key]
        since = self._clock() - span
        store = self._context.usage_store
        by: Any = self.by
        self._groups = store.summary(since, by=by)
        points = store.series(since, step, by=by)
        self._slots = lay_out(points, since, span, step)
        self._draw(self._slots, step)
        self._fill_table(self._groups, points, since, span, step)
        total = sum(g.requests for g in self._groups)
        errors = sum(g.error_count for g in self._groups)
        self.summary.setText(
            self.tr("%1 requests, %2 errors").replace("%1", str(total)).replace("%2", str(errors))
        )

    def _say_if_off(self) -> None:
        if self._context.effective.settings.collect_usage:
            self.notice.setText("")
            self.notice.setVisible(False)
            return
        locked = self._context.effective.is_locked("collect_usage")
        self.notice.setText(
            self.tr(
                "Usage is not being recorded: your organization turned it off "
                "(policy CollectUsage). Earlier usage is still shown."
            )
            if locked
            else self.tr(
                "Usage is not being recorded (collect_usage = false in the settings). "
                "Earlier usage is still shown."
            )
        )
        self.notice.setVisible(True)

    # ------------------------------------------------------------------ drawing
    def _colors(self) -> tuple[QColor, QColor]:
        palette = self.palette()
        return palette.base().color(), palette.text().color()

    def _draw(self, slots: Slots, step: float) -> None:
        background, text = self._colors()
        for plot in (self.requests_plot, self.tokens_plot, self.latency_plot, self.errors_plot):
            plot.clear()
            plot.setBackground(background)
            item = plot.getPlotItem()
            item.titleLabel.setText(item.titleLabel.text, color=text.name())
            for name in ("left", "bottom"):
                axis = item.getAxis(name)
                axis.setPen(pg.mkPen(text))
                axis.setTextPen(pg.mkPen(text))
            legend = item.legend
            if legend is not None:
                legend.setLabelTextColor(text)
        x = [s + step / 2 for s in slots.starts]
        width = step * 0.8
        named = {g: self._name(g) for g in slots.groups}
        for plot, column in (
            (self.requests_plot, slots.requests),
            (self.tokens_plot, slots.tokens),
        ):
            base = [0.0] * len(x)
            for i, group in enumerate(slots.groups):
                heights = column[group]
                brush = QColor(PALETTE[i % len(PALETTE)])
                bars = pg.BarGraphItem(
                    x=x, y0=base, height=heights, width=width, brush=brush, pen=pg.mkPen(None)
                )
                plot.addItem(bars)
                plot.getPlotItem().legend.addItem(bars, named[group])
                base = [b + h for b, h in zip(base, heights, strict=True)]
            # Headroom over the tallest stack for the legend's row.
            plot.setYRange(0, max([1.0, *base]) * 1.3, padding=0)
        for q, values, color, style in (
            ("p50", slots.p50, PALETTE[0], Qt.PenStyle.SolidLine),
            ("p99", slots.p99, PALETTE[5], Qt.PenStyle.DashLine),
        ):
            xs = [xi for xi, v in zip(x, values, strict=True) if v is not None]
            ys = [v for v in values if v is not None]
            self.latency_plot.plot(
                xs, ys, pen=pg.mkPen(color, width=2, style=style), symbol="o", symbolSize=4, name=q
            )
        tallest = max([1.0, *(v for v in slots.p99 if v is not None)])
        self.latency_plot.setYRange(0, tallest * 1.3, padding=0)
        xs = [xi for xi, v in zip(x, slots.error_rate, strict=True) if v is not None]
        ys = [v for v in slots.error_rate if v is not None]
        self.errors_plot.plot(
            xs,
            ys,
            pen=pg.mkPen(PALETTE[5], width=2),
            symbol="o",
            symbolSize=4,
            symbolBrush=PALETTE[5],
        )
        self.errors_plot.setYRange(0, max([5.0, *ys]) * 1.3, padding=0)
        for plot in (self.requests_plot, self.tokens_plot, self.latency_plot, self.errors_plot):
            plot.setXRange(slots.starts[0], slots.starts[-1] + step, padding=0)

    def _fill_table(
        self,
        groups: Sequence[UsageGroup],
        points: Sequence[SeriesPoint],
        since: float,
        span: float,
        step: float,
    ) -> None:
        self._headers()
        # Emptied first: the last read's sparklines go with their rows (not left behind).
        self.table.setRowCount(0)
        self.table.setRowCount(len(groups))
        start = since - since % HOUR
        n = int(span // step) + 1
        trend: dict[str, list[int]] = {g.name: [0] * n for g in groups}
        for p in points:
            i = int((p.start - start) // step)
            if p.group in trend and 0 <= i < n:
                trend[p.group][i] += p.requests
        background, text = self._colors()
        for row, g in enumerate(groups):
            d = g.as_dict()
            by_kind: dict[str, int] = d["errors_by_kind"]
            # One kind is all of them: its count again ("4 (invalid_api_key 4)") says nothing.
            alone = len(by_kind) == 1 and sum(by_kind.values()) == g.error_count
            kinds = ", ".join(k if alone else f"{k} {v}" for k, v in by_kind.items())
            cells = [
                self._name(g.name),
                str(g.requests),
                str(g.error_count) + (f" ({kinds})" if kinds else ""),
                str(g.prompt_tokens),
                str(g.completion_tokens),
                _ms(d["ttft_ms"]["p50"]),
                f"{_ms(d['total_ms']['p50'])} / {_ms(d['total_ms']['p99'])}",
                "–" if g.tokens_per_s is None else f"{g.tokens_per_s:.1f}",
            ]
            for column, value in enumerate(cells):
                item = QTableWidgetItem(value)
                if column == ERRORS_COLUMN and kinds:
                    item.setToolTip(value)  # whole, where the column elides it
                if column:
                    item.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                self.table.setItem(row, column, item)
            spark = pg.PlotWidget()
            spark.setBackground(background)
            spark.hideAxis("left")
            spark.hideAxis("bottom")
            spark.setMouseEnabled(x=False, y=False)
            spark.setMenuEnabled(False)
            spark.hideButtons()
            spark.setFixedHeight(26)
            spark.plot(trend[g.name], pen=pg.mkPen(PALETTE[row % len(PALETTE)], width=1.5))
            counts = ", ".join(str(v) for v in trend[g.name])
            spark.setToolTip(self.tr("Requests per slot: %1").replace("%1", counts))
            self.table.setCellWidget(row, TREND_COLUMN, spark)
            self.table.setRowHeight(row, 28)
        _ = text

    def _name(self, group: str) -> str:
        """A group as the charts and table name it ("-": no key, no model)."""
        if group == "-":
            return self.tr("(no key)") if self.by == "key" else self.tr("(none)")
        if group == WINDOW_GROUP and self.by == "key":
            return self.tr("EdgeDesk window")
        return self.tr("other") if group == "other" else group

    # ------------------------------------------------------------------ hover
    def _hover(self, plot: Any) -> None:
        def moved(pos: QPointF) -> None:
            if self._slots is None or not plot.sceneBoundingRect().contains(pos):
                return
            x = plot.getPlotItem().vb.mapSceneToView(pos).x()
            text = self.describe_slot(plot, x)
            if text:
                QToolTip.showText(plot.mapToGlobal(plot.mapFromScene(pos).toPoint()), text, plot)

        plot.scene().sigMouseMoved.connect(moved)

    def describe_slot(self, plot: Any, x: float) -> str:
        """The exact values of the slot at time ``x`` in ``plot`` (what hovering shows)."""
        slots = self._slots
        if slots is None:
            return ""
        step = RANGES[self.range_key][1]
        i = int((x - slots.starts[0]) // step)
        if not 0 <= i < len(slots.starts):
            return ""
        when = datetime.fromtimestamp(slots.starts[i]).strftime("%Y-%m-%d %H:%M")
        lines = [when]
        if plot is self.requests_plot or plot is self.tokens_plot:
            column = slots.requests if plot is self.requests_plot else slots.tokens
            lines += [f"{self._name(g)}: {column[g][i]}" for g in slots.groups if column[g][i]]
            lines.append(
                self.tr("Total: %1").replace("%1", str(sum(column[g][i] for g in slots.groups)))
            )
        elif plot is self.latency_plot:
            lines.append(f"p50: {_ms(slots.p50[i])}   p99: {_ms(slots.p99[i])}")
        else:
            rate = slots.error_rate[i]
            lines.append(
                self.tr("No requests")
                if rate is None
                else self.tr("%1 % of %2 requests failed")
                .replace("%1", f"{rate:.1f}")
                .replace("%2", str(slots.totals[i]))
            )
        return "\n".join(lines)

    # ------------------------------------------------------------------ export
    def _ask_export(self) -> None:
        name, _ = QFileDialog.getSaveFileName(
            self,
            self.tr("Export usage"),
            f"edgedesk-usage-{self.range_key}-by-{self.by}.csv",
            self.tr("CSV files (*.csv)"),
        )
        if name:
            self.export(Path(name))

    def export(self, path: Path) -> None:
        """Write the table as shown (range, grouping) as CSV to ``path``."""
        try:
            path.write_text(csv_text(self._groups), encoding="utf-8")
        except OSError as exc:
            self.notice.setText(self.tr("Could not export: %1").replace("%1", str(exc)))
            self.notice.setVisible(True)
            return
        self.notice.setText(self.tr("Exported to %1").replace("%1", str(path)))
        self.notice.setVisible(True)

    def shutdown(self) -> None:
        """Stop listening to the recorder."""
        self._timer.stop()
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None


def _ms(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value / 1000:.2f} s" if value >= 1000 else f"{value:.0f} ms"
