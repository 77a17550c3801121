"""Render an ``edgedesk bench`` report as a small PNG bar chart (offscreen, no window).

Bars compare EdgeDesk with llama-cpp-python direct where a baseline was run; each bar is
labelled with its value so the picture can be read without the JSON.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QImage, QPainter
from PySide6.QtWidgets import QApplication

WIDTH, ROW, MARGIN, LABEL_W = 900, 34, 16, 300
OURS, BASE = QColor("#2f6fdf"), QColor("#9aa4b2")


# Any: BenchReport.to_dict()'s JSON (or a saved one), read by key
def _rows(report: dict[str, Any]) -> list[tuple[str, float, float | None, str]]:
    """(label, ours, baseline or None, unit) for every speed figure in the report."""
    base = report.get("baseline") or {}
    base_prompt = base.get("prompt_tokens_per_s", {})
    rows: list[tuple[str, float, float | None, str]] = []
    for length, speed in report.get("prompt_tokens_per_s", {}).items():
        rows.append(
            (f"prompt {length} tokens", float(speed), base_prompt.get(str(length)), "tok/s")
        )
    direct = base.get("generation_tokens_per_s")
    rows.append(("generation", float(report["generation_tokens_per_s"]), direct, "tok/s"))
    http = report.get("http") or {}
    if "generation_tokens_per_s" in http:
        rows.append(
            ("generation over HTTP", float(http["generation_tokens_per_s"]), direct, "tok/s")
        )
    return rows


# Any: BenchReport.to_dict()'s JSON (or a saved one), read by key
def render_chart(report: dict[str, Any], out: Path) -> Path:
    """Draw the report's speed figures to ``out`` (PNG); returns the path."""
    # Fonts need a GUI application; offscreen is enough (no window is shown).
    # A QApplication (not just QGuiApplication), so a later widget app can share it; the
    # offscreen platform draws on machines without a display (servers, CI, SSH).
    if QApplication.instance() is None:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    _app = QApplication.instance() or QApplication(["edgedesk-bench"])
    rows = _rows(report)
    height = MARGIN * 2 + 60 + ROW * len(rows) + 30
    image = QImage(WIDTH, height, QImage.Format.Format_ARGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    title = QFont()
    title.setPointSize(13)
    title.setBold(True)
    painter.setFont(title)
    painter.drawText(MARGIN, MARGIN + 18, f"{report['model']} — {report['backend']}")
    painter.setFont(QFont())
    painter.drawText(MARGIN, MARGIN + 40, str(report["hardware"])[:120])
    scale = max([r[1] for r in rows] + [r[2] or 0.0 for r in rows] + [1e-9])
    bar_w = WIDTH - LABEL_W - MARGIN * 2 - 110
    top = MARGIN + 60
    for index, (label, ours, base, unit) in enumerate(rows):
        y = top + index * ROW
        painter.setPen(QColor("black"))
        painter.drawText(
            QRectF(MARGIN, y, LABEL_W - 10, ROW),
            Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
            label,
        )
        half = (ROW - 10) / 2 if base is not None else ROW - 10
        painter.fillRect(QRectF(LABEL_W, y + 4, bar_w * ours / scale, half), OURS)
        text = f"{ours:,.1f} {unit}"
        if base is not None:
            painter.fillRect(QRectF(LABEL_W, y + 4 + half, bar_w * base / scale, half), BASE)
            text += f"  (x{ours / base:.2f})" if base else ""
        longest = max(ours, base or 0.0)
        painter.drawText(
            QRectF(LABEL_W + bar_w * longest / scale + 6, y, 200, ROW),
            Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
            text,
        )
    legend_y = top + len(rows) * ROW + 8
    painter.fillRect(QRectF(MARGIN, legend_y, 14, 14), OURS)
    painter.drawText(MARGIN + 20, legend_y + 12, "EdgeDesk")
    if report.get("baseline"):
        painter.fillRect(QRectF(MARGIN + 110, legend_y, 14, 14), BASE)
        painter.drawText(MARGIN + 130, legend_y + 12, "llama-cpp-python direct")
    painter.end()
    # The stubs say bytes, but PySide6 6.12 accepts only str for the format at run time.
    if not image.save(str(out), "PNG"):  # type: ignore[call-overload]
        raise OSError(f"cannot write the chart to {out}")
    return out
