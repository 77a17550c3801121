"""This machine in one report, as llama.cpp sees it: shared by ``edgedesk doctor`` and the window.

The backend compiled in, the devices ggml's registry lists (name, memory total/free,
driver), why a GPU is not used (in a sentence that says what to do), and how each
installed model fits. Everything here is a blocking call; the window runs it on a
worker thread.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from desktop import __version__
from desktop.base.errors import EdgeDeskError
from desktop.base.filebytes import format_bytes
from desktop.root.context import AppContext

if TYPE_CHECKING:  # llama.cpp is loaded only when the report is asked for
    from desktop.engine import BackendInfo


def _run(command: list[str]) -> str:
    """A diagnostic tool's output, or '' when it is absent, fails or hangs."""
    if shutil.which(command[0]) is None:
        return ""
    try:
        done = subprocess.run(  # noqa: S603 - fixed vendor tools, no shell
            command, capture_output=True, text=True, timeout=15, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout if done.returncode == 0 else ""


def parse_vulkaninfo(summary: str) -> dict[str, str]:
    """deviceName -> 'driverName driverInfo' from ``vulkaninfo --summary`` output."""
    drivers: dict[str, str] = {}
    name = driver = ""
    for line in summary.splitlines():
        key, _, value = (part.strip() for part in line.partition("="))
        if key == "deviceName":
            name, driver = value, ""
        elif key == "driverName":
            driver = value
        elif key == "driverInfo" and name:
            drivers[name] = f"{driver} {value}".strip()
    return drivers


def driver_versions(backend: str) -> dict[str, str]:
    """Device description -> driver version, from the vendor's own tool (best effort)."""
    if backend == "CUDA":
        out = _run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"])
        pairs = (line.rsplit(",", 1) for line in out.splitlines() if "," in line)
        return {n.strip(): f"NVIDIA {v.strip()}" for n, v in pairs}
    if backend == "Vulkan":
        return parse_vulkaninfo(_run(["vulkaninfo", "--summary"]))
    if backend in ("Metal", "MTL") and platform.system() == "Darwin":
        return {"*": f"macOS {platform.mac_ver()[0]}"}
    return {}


class DeviceRow(TypedDict):
    """One device ggml's registry lists, as the report's ``devices`` shows it."""

    name: str
    description: str
    backend: str
    kind: str
    offload: bool
    memory_total_bytes: int
    memory_free_bytes: int
    driver: str | None


class ModelRow(TypedDict):
    """How one installed model fits, as the report's ``models`` shows it."""

    id: str
    path: str
    fit: str
    reason: str
    gpu_layers: NotRequired[int]
    total_layers: NotRequired[int]
    context_length: NotRequired[int]
    estimated_bytes: NotRequired[int]
    vram_bytes: NotRequired[int]
    ram_bytes: NotRequired[int]
    experts_in_ram_layers: NotRequired[int]
    placement: NotRequired[str]


def _devices(backend: Any) -> list[DeviceRow]:
    rows: list[DeviceRow] = []
    drivers: dict[str, dict[str, str]] = {}
    for dev in backend.devices:
        if dev.backend not in drivers:
            drivers[dev.backend] = driver_versions(dev.backend)
        known = drivers[dev.backend]
        rows.append(
            {
                "name": dev.name,
                "description": dev.description,
                "backend": dev.backend,
                "kind": dev.kind,
                "offload": dev.is_gpu,
                "memory_total_bytes": dev.total_bytes,
                "memory_free_bytes": dev.free_bytes,
                "driver": known.get(dev.description) or known.get("*"),
            }
        )
    return rows


def _why_not(ctx: AppContext, backend: BackendInfo) -> str:
    from desktop.engine import why_no_gpu

    if not backend.gpu_offload:
        why = why_no_gpu(backend)
        unused = [g.name for g in ctx.hardware.gpus]
        if unused:
            why += f" (GPU present but unused: {', '.join(unused)}.)"
        return why
    if ctx.settings.engine.gpu_layers == 0:
        return "gpu_layers = 0 in settings keeps every layer on the CPU; remove it for automatic."
    return ""


def why_not_kind(
    backend: BackendInfo, gpu_layers: int | None, environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Which of ``why_no_gpu``'s sentences applies, as a kind and its parameters.

    The window says the sentence in its own language from these; {} when a GPU is used.
    """
    env = os.environ if environ is None else environ
    if backend.gpu_offload:
        return {"kind": "gpu_layers_zero"} if gpu_layers == 0 else {}
    compiled = backend.compiled_gpu
    if not compiled:
        return {"kind": "cpu_build"}
    if compiled == "vulkan" and "GGML_VK_VISIBLE_DEVICES" in env:
        return {"kind": "vulkan_selected_none", "value": env["GGML_VK_VISIBLE_DEVICES"]}
    if compiled in ("vulkan", "cuda", "metal"):
        return {"kind": f"{compiled}_no_device"}
    return {"kind": "no_device", "backend": compiled}


def _models(ctx: AppContext) -> list[ModelRow]:
    rows: list[ModelRow] = []
    for model in ctx.installed.all():
        path = model.files[0] if model.files else ""
        try:
            plan = ctx.resolver.fit(ctx.resolver.info(model.paths[0]))
        except (EdgeDeskError, OSError) as exc:
            reason = str(getattr(exc, "message", exc))
            rows.append({"id": model.id, "path": path, "fit": "unreadable", "reason": reason})
            continue
        rows.append(
            {
                "id": model.id,
                "path": path,
                "fit": str(plan.verdict),
                "reason": plan.reason,
                "gpu_layers": plan.gpu_layers,
                "total_layers": plan.total_layers,
                "context_length": plan.context_length,
                "estimated_bytes": plan.estimated_bytes,
                "vram_bytes": plan.vram_bytes,
                "ram_bytes": plan.ram_bytes,
                "experts_in_ram_layers": plan.experts_in_ram_layers,
                "placement": plan.where(),
            }
        )
    return rows


# Any: nested report JSON; format_report and the window read it by key
def doctor_report(ctx: AppContext) -> dict[str, Any]:
    """The whole report as plain data (what ``--json`` prints and Settings shows)."""
    from desktop.engine import as_report, backend_info, cpu_features, list_backends

    backend = backend_info()
    return {
        "version": __version__,
        "backend": {
            "name": backend.name,
            "describe": backend.describe(),
            "compiled": list_backends(),
            "compiled_gpu": backend.compiled_gpu,
            "gpu_offload": backend.gpu_offload,
        },
        "devices": _devices(backend),
        "gpu_used": backend.gpu_offload and ctx.settings.engine.gpu_layers != 0,
        "why_not_gpu": _why_not(ctx, backend),
        "hardware": ctx.hardware.describe(),
        # The same as numbers, with the reason as a kind: the window words them itself.
        "machine": {
            "ram_total_bytes": ctx.hardware.ram_total_bytes,
            "ram_available_bytes": ctx.hardware.ram_available_bytes,
            "cpu_count": ctx.hardware.cpu_count,
            "gpus": [
                {"name": g.name, "total_bytes": g.total_bytes, "free_bytes": g.free_bytes}
                for g in ctx.hardware.gpus
            ],
        },
        "why_not_gpu_kind": why_not_kind(backend, ctx.settings.engine.gpu_layers),
        "models": _models(ctx),
        # The CPU features llama.cpp was compiled for, against this machine's.
        "cpu": dict(as_report(cpu_features())),
        "data": _data(ctx),
    }


def _data(ctx: AppContext) -> dict[str, object]:
    """Whether the database is encrypted, with what, and where its key comes from."""
    try:
        status = ctx.at_rest.status()
    except EdgeDeskError as exc:  # an unreadable key file: say so, the report goes on
        return {
            "database": str(ctx.paths.database),
            "encrypted": None,
            "cipher": None,
            "key_source": None,
            "problem": exc.message,
        }
    return {**status, "problem": None}


def _memory(value: int) -> str:
    return format_bytes(value, memory=True)


def _cpu_lines(cpu: Mapping[str, Any] | None) -> list[str]:
    """Built-for against this CPU, feature by feature, and a warning for any it lacks."""
    if not cpu:
        return []
    built = [f for f, on in cpu["built"].items() if on]
    have = [f for f, on in cpu["machine"].items() if on and f != "AMX_INT8"]
    lines = [
        f"cpu:       llama.cpp built for {', '.join(built) or 'no extension (generic)'}",
        f"           this CPU has {', '.join(have) or 'none of them'}; AMX: {cpu['amx']}",
    ]
    if cpu["amx"] != "absent" and cpu.get("amx_probe"):  # what the tile probe saw
        lines.append(f"           AMX probe: {cpu['amx_probe']}")
    if cpu.get("amx_kernels") == "left out":  # scripts/amx-check.sh: they crash here
        lines.append(
            "           llama.cpp's AMX kernels left out: they crash on this llama.cpp "
            "(EDGEDESK_AMX=1 ./scripts/install.sh builds them)"
        )
    elif cpu.get("amx_kernels") == "built in":
        lines.append(
            "  note: llama.cpp's AMX kernels are built in (EDGEDESK_AMX=1); on some "
            "machines they crash reading any prompt: if every model crashes, reinstall "
            "without EDGEDESK_AMX=1"
        )
    if cpu["missing"]:
        lines.append(
            f"  warning: llama.cpp was built for {', '.join(cpu['missing'])}, which "
            "this CPU cannot run: it would stop with SIGILL. Rebuild it for this "
            "machine with ./scripts/install.sh"
        )
    return lines


# Any: doctor_report's JSON, read by key
def format_report(report: dict[str, Any]) -> list[str]:
    """The report as lines for people (the CLI prints them; Settings shows them)."""
    backend = report["backend"]
    lines = [
        f"edgedesk {report['version']}",
        f"backend:   {backend['describe']}  (compiled in: "
        f"{', '.join(backend['compiled']) or 'unknown'})",
        f"machine:   {report['hardware']}",
        "devices:",
    ]
    for dev in report["devices"]:
        role = "offload" if dev["offload"] else "host"
        driver = dev["driver"] or ("unknown" if dev["offload"] else "-")
        lines.append(
            f"  {dev['name']:<10} {dev['description']}  [{dev['kind']}, {role}]  "
            f"{_memory(dev['memory_free_bytes'])} free of "
            f"{_memory(dev['memory_total_bytes'])}  driver: {driver}"
        )
    if not report["devices"]:
        lines.append("  (none reported)")
    lines += _cpu_lines(report.get("cpu"))
    lines.append("GPU:       " + ("used" if report["gpu_used"] else "not used"))
    if report["why_not_gpu"]:
        lines.append(f"  why:     {report['why_not_gpu']}")
    lines.append("installed models:")
    for model in report["models"]:
        lines.append(f"  {model['id']:<28} {model['fit']}: {model['reason']}")
        if model.get("placement"):
            lines.append(f"  {'':<28} {model['placement']}")
    if not report["models"]:
        lines.append("  (none; 'edgedesk models pull ID' or 'edgedesk models import FILE')")
    return lines


# Any: doctor_report's JSON, read by key
def data_line(report: dict[str, Any]) -> str | None:
    """``edgedesk doctor``'s line on encryption at rest (None: the report has no data part)."""
    data = report.get("data")
    if not data:
        return None
    if data["problem"]:
        return f"encrypted: unknown ({data['problem']})"
    if data["encrypted"]:
        return f"encrypted: yes, {data['cipher']}; key: {data['key_source']}"
    return "encrypted: no  (edgedesk data encrypt)"
