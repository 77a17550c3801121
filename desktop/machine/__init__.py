"""This machine as EdgeDesk measures it: edgedesk doctor and edgedesk bench.

Both run through the composition root, so their figures are the product's own paths.

The face: ``__all__`` is its contract, and code outside ``desktop.machine`` imports only
these names (an import-linter contract in pyproject.toml). The insides, whose names start
with ``_``, are free to change: ``_doctor`` (the report), ``_bench`` (the figures) and
``_bench_clients`` (the HTTP clients the bench starts, ``python -m
desktop.machine._bench_clients``). A name is imported from its inside module on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop.base.faces import lazy_exports

if TYPE_CHECKING:
    from desktop.machine._bench import BenchReport, run_bench
    from desktop.machine._doctor import data_line, doctor_report, format_report, parse_vulkaninfo

__all__ = [
    "BenchReport",
    "data_line",
    "doctor_report",
    "format_report",
    "parse_vulkaninfo",
    "run_bench",
]

# The inside module that defines each name of the face, imported on first use of the name.
_WHERE = {
    "BenchReport": "_bench",
    "run_bench": "_bench",
    "data_line": "_doctor",
    "doctor_report": "_doctor",
    "format_report": "_doctor",
    "parse_vulkaninfo": "_doctor",
}

if not TYPE_CHECKING:  # mypy reads the imports above instead
    __getattr__, __dir__ = lazy_exports(__name__, _WHERE)
