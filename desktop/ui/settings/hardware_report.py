"""``edgedesk doctor``'s report worded by the window, in the window's language.

``desktop.machine._doctor`` makes the report as data and words it in English for the terminal
(``format_report``); this module words the same data through Qt's translation
("HardwareReport" context), from the numbers and kinds in the report rather than from
the English sentences. In English the lines read as the terminal prints them (a model
that will not fit leaves out the usable memory). Window's thread only (translators).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

from desktop.base.filebytes import format_bytes
from desktop.catalog import GPU, Hardware, Verdict
from desktop.ui.common.core_text import machine_summary, verdict_text

# Why no GPU is used: desktop.engine.why_no_gpu's sentences, by doctor's kind.
WHY_NOT = {
    "cpu_build": QT_TRANSLATE_NOOP(
        "HardwareReport",
        "This llama-cpp-python was built for the CPU only. Reinstall with "
        "./scripts/install.sh (it detects the GPU; EDGEDESK_GPU=cuda|vulkan|metal forces "
        "one) to use a GPU.",
    ),
    "vulkan_no_device": QT_TRANSLATE_NOOP(
        "HardwareReport",
        "The Vulkan backend found no device. Install the GPU's Vulkan driver (Mesa "
        "RADV/ANV, NVIDIA, AMD). Software devices such as llvmpipe/lavapipe are skipped "
        "unless GGML_VK_VISIBLE_DEVICES selects them.",
    ),
    "vulkan_selected_none": QT_TRANSLATE_NOOP(
        "HardwareReport",
        "The Vulkan backend found no device. GGML_VK_VISIBLE_DEVICES=%1 selected no usable device.",
    ),
    "cuda_no_device": QT_TRANSLATE_NOOP(
        "HardwareReport",
        "The CUDA backend found no device: install or update the NVIDIA driver (nvidia-smi "
        "must list the GPU), or check CUDA_VISIBLE_DEVICES.",
    ),
    "metal_no_device": QT_TRANSLATE_NOOP(
        "HardwareReport",
        "The Metal backend found no device (Apple Silicon or a Metal GPU is needed).",
    ),
    "no_device": QT_TRANSLATE_NOOP(
        "HardwareReport", "The %1 backend found no device: check its driver/runtime."
    ),
    "gpu_layers_zero": QT_TRANSLATE_NOOP(
        "HardwareReport",
        "gpu_layers = 0 in settings keeps every layer on the CPU; remove it for automatic.",
    ),
}


def _t(text: object) -> str:
    return QCoreApplication.translate("HardwareReport", str(text))


def why_not_gpu(report: Mapping[str, Any]) -> str:
    """Why no GPU is used, in the window's language; '' when one is used."""
    why = report.get("why_not_gpu_kind") or {}
    source = WHY_NOT.get(str(why.get("kind", "")))
    if source is None:  # a report without kinds (older doctor): its own words
        return str(report.get("why_not_gpu") or "")
    text = _t(source).replace("%1", str(why.get("value") or why.get("backend") or ""))
    unused = [g["name"] for g in report.get("machine", {}).get("gpus", [])]
    if unused and not report.get("backend", {}).get("gpu_offload", False):
        text += QCoreApplication.translate(
            "HardwareReport", " (GPU present but unused: %1.)"
        ).replace("%1", ", ".join(unused))
    return text


def _machine(report: Mapping[str, Any]) -> str:
    numbers = report.get("machine")
    if not numbers:
        return str(report.get("hardware", ""))
    gpus = tuple(GPU(g["name"], g["total_bytes"], g["free_bytes"]) for g in numbers["gpus"])
    return machine_summary(
        Hardware(
            numbers["ram_total_bytes"], numbers["ram_available_bytes"], numbers["cpu_count"], gpus
        )
    )


def fit_reason(model: Mapping[str, Any], *, gpu_offload: bool) -> str:
    """Why a model fits as it does, from the plan's numbers (doctor's ``models`` rows)."""
    verdict = model.get("fit")
    if verdict == str(Verdict.NO):
        return (
            QCoreApplication.translate("HardwareReport", "needs ~%1 at context %2")
            .replace("%1", format_bytes(int(model["estimated_bytes"]), memory=True))
            .replace("%2", str(model["context_length"]))
        )
    if verdict == str(Verdict.GPU):
        return QCoreApplication.translate("HardwareReport", "all %1 layers on the GPU").replace(
            "%1", str(model["total_layers"])
        )
    if verdict == str(Verdict.PARTIAL):
        return (
            QCoreApplication.translate("HardwareReport", "%1/%2 layers on the GPU, rest on CPU")
            .replace("%1", str(model["gpu_layers"]))
            .replace("%2", str(model["total_layers"]))
        )
    if verdict == str(Verdict.CPU) and gpu_offload:
        return QCoreApplication.translate("HardwareReport", "runs on the CPU (no GPU memory free)")
    if verdict == str(Verdict.CPU):
        return QCoreApplication.translate(
            "HardwareReport", "runs on the CPU (no GPU offload in this build)"
        )
    return str(model.get("reason", ""))  # unreadable: the file's problem, as it was said


def cpu_lines(cpu: Mapping[str, Any] | None) -> list[str]:
    """llama.cpp's compiled CPU features against this CPU's, as ``format_report`` says them."""
    if not cpu:
        return []
    amx = {
        "absent": QCoreApplication.translate("HardwareReport", "absent"),
        "usable": QCoreApplication.translate("HardwareReport", "usable"),
        "listed, not usable": QCoreApplication.translate("HardwareReport", "listed, not usable"),
        "listed, not checked": QCoreApplication.translate("HardwareReport", "listed, not checked"),
    }
    built = ", ".join(f for f, on in cpu["built"].items() if on) or QCoreApplication.translate(
        "HardwareReport", "no extension (generic)"
    )
    have = ", ".join(
        f for f, on in cpu["machine"].items() if on and f != "AMX_INT8"
    ) or QCoreApplication.translate("HardwareReport", "none of them")
    lines = [
        QCoreApplication.translate("HardwareReport", "cpu:       llama.cpp built for %1").replace(
            "%1", built
        ),
        QCoreApplication.translate("HardwareReport", "           this CPU has %1; AMX: %2")
        .replace("%1", have)
        .replace("%2", amx.get(str(cpu["amx"]), str(cpu["amx"]))),
    ]
    if cpu["amx"] != "absent" and cpu.get("amx_probe"):  # the probe's own words
        lines.append(
            QCoreApplication.translate("HardwareReport", "           AMX probe: %1").replace(
                "%1", str(cpu["amx_probe"])
            )
        )
    if cpu.get("amx_kernels") == "left out":
        lines.append(
            QCoreApplication.translate(
                "HardwareReport",
                "           llama.cpp's AMX kernels left out: they crash on this llama.cpp "
                "(EDGEDESK_AMX=1 ./scripts/install.sh builds them)",
            )
        )
    elif cpu.get("amx_kernels") == "built in":
        lines.append(
            QCoreApplication.translate(
                "HardwareReport",
                "  note: llama.cpp's AMX kernels are built in (EDGEDESK_AMX=1); on some "
                "machines they crash reading any prompt: if every model crashes, reinstall "
                "without EDGEDESK_AMX=1",
            )
        )
    if cpu["missing"]:
        lines.append(
            QCoreApplication.translate(
                "HardwareReport",
                "  warning: llama.cpp was built for %1, which this CPU cannot run: it would stop "
                "with SIGILL. Rebuild it for this machine with ./scripts/install.sh",
            ).replace("%1", ", ".join(cpu["missing"]))
        )
    return lines


def report_lines(report: Mapping[str, Any]) -> list[str]:
    """The report as lines, worded as ``format_report`` words them, translated."""
    backend = report["backend"]
    name = str(backend.get("name") or backend.get("describe", ""))
    shown = (
        QCoreApplication.translate("HardwareReport", "%1 (GPU offload)").replace("%1", name)
        if backend.get("gpu_offload")
        else name
    )
    compiled = ", ".join(backend["compiled"]) or QCoreApplication.translate(
        "HardwareReport", "unknown"
    )
    lines = [
        f"edgedesk {report['version']}",
        QCoreApplication.translate("HardwareReport", "backend:   %1  (compiled in: %2)")
        .replace("%1", shown)
        .replace("%2", compiled),
        QCoreApplication.translate("HardwareReport", "machine:   %1").replace(
            "%1", _machine(report)
        ),
        QCoreApplication.translate("HardwareReport", "devices:"),
    ]
    for dev in report["devices"]:
        role = (
            QCoreApplication.translate("HardwareReport", "offload")
            if dev["offload"]
            else QCoreApplication.translate("HardwareReport", "host")
        )
        driver = dev["driver"] or (
            QCoreApplication.translate("HardwareReport", "unknown") if dev["offload"] else "-"
        )
        lines.append(
            QCoreApplication.translate(
                "HardwareReport", "  %1 %2  [%3, %4]  %5 free of %6  driver: %7"
            )
            .replace("%1", f"{dev['name']:<10}")
            .replace("%2", str(dev["description"]))
            .replace("%3", str(dev["kind"]))
            .replace("%4", role)
            .replace("%5", format_bytes(dev["memory_free_bytes"], memory=True))
            .replace("%6", format_bytes(dev["memory_total_bytes"], memory=True))
            .replace("%7", str(driver))
        )
    if not report["devices"]:
        lines.append(QCoreApplication.translate("HardwareReport", "  (none reported)"))
    lines += cpu_lines(report.get("cpu"))
    lines.append(
        QCoreApplication.translate("HardwareReport", "GPU:       used")
        if report["gpu_used"]
        else QCoreApplication.translate("HardwareReport", "GPU:       not used")
    )
    why = why_not_gpu(report)
    if why:
        lines.append(
            QCoreApplication.translate("HardwareReport", "  why:     %1").replace("%1", why)
        )
    lines.append(QCoreApplication.translate("HardwareReport", "installed models:"))
    offload = bool(backend.get("gpu_offload"))
    for model in report["models"]:
        fit = model["fit"]
        verdict = (
            QCoreApplication.translate("HardwareReport", "unreadable")
            if fit == "unreadable"
            else verdict_text(str(fit))
        )
        lines.append(f"  {model['id']:<28} {verdict}: {fit_reason(model, gpu_offload=offload)}")
    if not report["models"]:
        lines.append(
            QCoreApplication.translate(
                "HardwareReport",
                "  (none; 'edgedesk models pull ID' or 'edgedesk models import FILE')",
            )
        )
    return lines
