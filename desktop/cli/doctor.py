"""``edgedesk doctor [--json]``: this machine in one screen, as llama.cpp sees it.

The backend compiled in, the devices ggml's registry lists (name, memory total/free,
driver), why a GPU is not used (in a sentence that says what to do), and how each
installed model fits. The report itself is ``desktop.machine._doctor``, which the window's
Settings shows too, so both say the same thing.
"""

from __future__ import annotations

import argparse
import json

from desktop.cli.arguments import context_for
from desktop.machine import data_line, doctor_report, format_report, parse_vulkaninfo

__all__ = ["doctor_report", "format_report", "handle_doctor", "parse_vulkaninfo", "register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``doctor`` verb."""
    from desktop.cli.options import common_options

    doctor = sub.add_parser(
        "doctor",
        parents=[common_options()],
        help="backend, GPUs, why a GPU is not used, fit of installed models",
    )
    doctor.add_argument("--json", action="store_true", help="print the report as JSON")
    doctor.set_defaults(handler=handle_doctor)


def handle_doctor(args: argparse.Namespace) -> int:
    """Print the report (or JSON with ``--json``)."""
    ctx = context_for(args)
    try:
        report = doctor_report(ctx)
    finally:
        ctx.close()
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        print("\n".join(format_report(report)))
        line = data_line(report)  # the CLI's (the window's Settings shows the hardware)
        if line:
            print(line)
    return 0
