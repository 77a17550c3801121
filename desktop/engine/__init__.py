"""The engine: loads GGUF models with llama.cpp, streams chat, embeds, schedules.

This module is the engine's face: ``__all__`` below is everything code outside
``desktop/engine/`` may use (an import-linter contract in pyproject.toml holds it:
"Outside desktop.engine, only its face is imported"). What starts with ``_`` is the
engine's insides, free to change: ``_types`` (what goes in and out: ``ChatCall``,
``Delta``, ``ModelSpec``...), ``_protocol`` (``Engine``), ``_scheduler``, ``_loader``,
``_llama`` (one loaded model), ``_batching/`` (the decode loop), ``_prompting/`` (chat
templates, tool-call parsing, grammars, stop strings), ``_hardware/``, ``_worker/`` (a
model in a process of its own), and ``_llama_cpp``, the one module that imports
llama_cpp (after setting llama.cpp's OpenMP spin count: see there).

Importing this package does nothing else: each name is imported from its module when
first used (a module ``__getattr__``), so ``import desktop.engine`` loads neither
llama_cpp nor numpy (``tests/engine/test_engine_package.py``). The ``TYPE_CHECKING``
block shows mypy and readers where each name lives.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop.base.faces import lazy_exports

if TYPE_CHECKING:
    from desktop.engine._baseline import run_baseline
    from desktop.engine._broken import BrokenFile
    from desktop.engine._hardware.backend import BackendInfo, backend_info, why_no_gpu
    from desktop.engine._hardware.cpu_features import as_report, cpu_features
    from desktop.engine._hardware.devices import GPU_BACKENDS, gpu_devices, list_backends
    from desktop.engine._hardware.library import library_error, require_llama_cpp
    from desktop.engine._hardware.placement import default_devices, planned_placement
    from desktop.engine._images import (
        DEFAULT_LIMITS,
        ImageLimits,
        image_limits,
        inspect_image,
        load_image,
        sniff,
    )
    from desktop.engine._loader import load_engine
    from desktop.engine._native import gpu_offload_supported
    from desktop.engine._offload import repack_types
    from desktop.engine._overlong import PIECE_CHARS, iter_pieces, refuse_overlong
    from desktop.engine._prompting.templates import resolve_template
    from desktop.engine._prompting.toolcalls import gate_calls, new_call_id
    from desktop.engine._protocol import Engine
    from desktop.engine._scheduler import Scheduler
    from desktop.engine._types import (
        MEDIA_MARKER,
        ChatCall,
        Delta,
        EngineStats,
        FinishReason,
        GenerationParams,
        Image,
        LoadReport,
        LocalPlan,
        Message,
        ModelKind,
        ModelSpec,
        Placement,
        RemotePlan,
        Role,
        Timings,
        TokenLogprob,
        ToolCall,
        ToolSpec,
        Usage,
    )
    from desktop.engine._worker.child import main as worker_main
    from desktop.engine._worker.start import start_worker, worker_log

__all__ = [
    "DEFAULT_LIMITS",
    "GPU_BACKENDS",
    "MEDIA_MARKER",
    "PIECE_CHARS",
    "BackendInfo",
    "BrokenFile",
    "ChatCall",
    "Delta",
    "Engine",
    "EngineStats",
    "FinishReason",
    "GenerationParams",
    "Image",
    "ImageLimits",
    "LoadReport",
    "LocalPlan",
    "Message",
    "ModelKind",
    "ModelSpec",
    "Placement",
    "RemotePlan",
    "Role",
    "Scheduler",
    "Timings",
    "TokenLogprob",
    "ToolCall",
    "ToolSpec",
    "Usage",
    "as_report",
    "backend_info",
    "cpu_features",
    "default_devices",
    "gate_calls",
    "gpu_devices",
    "gpu_offload_supported",
    "image_limits",
    "inspect_image",
    "iter_pieces",
    "library_error",
    "list_backends",
    "load_engine",
    "load_image",
    "new_call_id",
    "planned_placement",
    "refuse_overlong",
    "repack_types",
    "require_llama_cpp",
    "resolve_template",
    "run_baseline",
    "sniff",
    "start_worker",
    "why_no_gpu",
    "worker_log",
    "worker_main",
]

# Each name of the face, by the inner module (below ``desktop.engine``) that defines it.
_WHERE: dict[str, str | tuple[str, str]] = {
    "ChatCall": "_types",
    "Delta": "_types",
    "EngineStats": "_types",
    "FinishReason": "_types",
    "GenerationParams": "_types",
    "Image": "_types",
    "LoadReport": "_types",
    "LocalPlan": "_types",
    "MEDIA_MARKER": "_types",
    "Message": "_types",
    "ModelKind": "_types",
    "ModelSpec": "_types",
    "Placement": "_types",
    "RemotePlan": "_types",
    "Role": "_types",
    "Timings": "_types",
    "TokenLogprob": "_types",
    "ToolCall": "_types",
    "ToolSpec": "_types",
    "Usage": "_types",
    "Engine": "_protocol",
    "Scheduler": "_scheduler",
    "load_engine": "_loader",
    "BrokenFile": "_broken",
    "DEFAULT_LIMITS": "_images",
    "ImageLimits": "_images",
    "image_limits": "_images",
    "inspect_image": "_images",
    "load_image": "_images",
    "sniff": "_images",
    "PIECE_CHARS": "_overlong",
    "iter_pieces": "_overlong",
    "refuse_overlong": "_overlong",
    "resolve_template": "_prompting.templates",
    "gate_calls": "_prompting.toolcalls",
    "new_call_id": "_prompting.toolcalls",
    "gpu_offload_supported": "_native",
    "repack_types": "_offload",
    "run_baseline": "_baseline",
    "BackendInfo": "_hardware.backend",
    "backend_info": "_hardware.backend",
    "why_no_gpu": "_hardware.backend",
    "as_report": "_hardware.cpu_features",
    "cpu_features": "_hardware.cpu_features",
    "GPU_BACKENDS": "_hardware.devices",
    "gpu_devices": "_hardware.devices",
    "list_backends": "_hardware.devices",
    "library_error": "_hardware.library",
    "require_llama_cpp": "_hardware.library",
    "default_devices": "_hardware.placement",
    "planned_placement": "_hardware.placement",
    "start_worker": "_worker.start",
    "worker_log": "_worker.start",
    "worker_main": ("_worker.child", "main"),
}

if not TYPE_CHECKING:  # mypy reads the imports above instead
    __getattr__, __dir__ = lazy_exports(__name__, _WHERE)
