"""``edgedesk models list|info|retry``: the catalog, what is installed, what fits here,
and trying again a model marked broken after its worker crashed on every load."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from desktop import catalog
from desktop.base.errors import EdgeDeskError, InvalidRequest, ModelNotFound
from desktop.base.filebytes import format_bytes
from desktop.catalog import (
    Catalog,
    Fit,
    GGUFInfo,
    Hardware,
    InstalledIndex,
    ModelEntry,
    with_memory,
)
from desktop.cli.arguments import context_for
from desktop.cli.options import moe_settings
from desktop.cli.remotes import remote_rows
from desktop.resolve import ModelResolver, looks_like_path

if TYPE_CHECKING:
    from desktop.engine import BrokenFile


class ModelsHere(Protocol):
    """What the ``models`` actions read (the context they run in has them, built lazily)."""

    @property
    def catalog(self) -> Catalog:
        """The model catalog."""

    @property
    def resolver(self) -> ModelResolver:
        """Model reference -> fitted load plan."""

    @property
    def installed(self) -> InstalledIndex:
        """Downloaded and imported models."""

    @property
    def hardware(self) -> Hardware:
        """This machine (probed on first use)."""

    @property
    def gpu_offload(self) -> bool:
        """Whether this llama.cpp build offloads to a GPU."""

    @property
    def broken_models(self) -> BrokenFile:
        """Models marked broken after their worker crashed on every load."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``models`` verb group."""
    from desktop.cli.options import common_options, moe_options

    models = sub.add_parser(
        "models", parents=[common_options()], help="list, inspect and manage models"
    )
    msub = models.add_subparsers(dest="models_verb", metavar="ACTION", required=True)
    common = common_options()
    listing = msub.add_parser("list", parents=[common], help="catalog and installed models")
    listing.add_argument("--json", action="store_true")
    _machine_options(listing)
    listing.set_defaults(handler=handle_list)
    info = msub.add_parser(
        "info", parents=[common, moe_options()], help="inspect a model without loading it"
    )
    info.add_argument("model", metavar="ID|PATH")
    info.add_argument("--ctx", type=int, default=None, metavar="N")
    _machine_options(info)
    info.add_argument("--json", action="store_true")
    info.set_defaults(handler=handle_info)
    retry = msub.add_parser(
        "retry", parents=[common], help="load a model marked broken again at its next request"
    )
    retry.add_argument("model", metavar="ID")
    retry.set_defaults(handler=handle_retry)
    for extension in _extensions():
        extension.register_models(msub)


def _machine_options(parser: argparse.ArgumentParser) -> None:
    """``--gpu-memory SIZE`` and ``--ram SIZE``: plan for that machine instead of this one."""
    from desktop.cli.options import memory_size

    parser.add_argument(
        "--gpu-memory",
        type=memory_size,
        default=None,
        metavar="SIZE",
        help="plan for a machine with one GPU of SIZE free (e.g. 8G; 0: none) instead of this one",
    )
    parser.add_argument(
        "--ram",
        type=memory_size,
        default=None,
        metavar="SIZE",
        help="plan for a machine with SIZE of RAM free instead of this one",
    )


def _extensions() -> list[Any]:
    """Other modules that add ``models`` actions (pull, rm, import, …)."""
    from desktop.cli import bundle, pull

    return [pull, bundle]


def _gib(value: int | None, *, memory: bool = False) -> str:
    return "?" if not value else format_bytes(value, memory=memory)


def _installed_files(ctx: ModelsHere, model_id: str) -> list[Path] | None:
    try:
        _, _, files = ctx.resolver.locate(model_id)
    except ModelNotFound:
        return None
    return files


# Any: each catalog row's to_dict() JSON, read back by field for the table
def catalog_rows(ctx: ModelsHere, hardware: Hardware | None = None) -> list[dict[str, Any]]:
    """One row per catalog model with its fit on this machine (or on ``hardware``)."""
    rows = catalog.catalog_rows(
        ctx.catalog,
        hardware or ctx.hardware,
        gpu_offload=ctx.gpu_offload if hardware is None else bool(hardware.gpus),
        installed=lambda model_id: _installed_files(ctx, model_id),
    )
    return [row.to_dict() for row in rows]


# Any: JSON rows for --json, read back by field for the table
def local_rows(ctx: ModelsHere, hardware: Hardware | None = None) -> list[dict[str, Any]]:
    """Installed models that are not catalog entries (REPO:FILE pulls, imports, bundles),
    fitted to this machine (or to ``hardware``)."""
    rows = []
    for model in ctx.installed.all():
        if model.catalog_id is not None or not all(p.exists() for p in model.paths):
            continue
        try:
            info = ctx.resolver.info(model.paths[0])
        except EdgeDeskError:
            continue  # a damaged file is reported when it is used, not in the listing
        plan = ctx.resolver.fit(info, hardware=hardware)
        rows.append(
            {
                "id": model.id,
                "name": info.name or model.id,
                "family": "other",
                "kind": "embedding" if info.pooling_type else "chat",
                "tier": "-",
                "repo": model.repo or model.source,
                "recommended_quant": info.file_type,
                "size_bytes": model.size,
                "fit": str(plan.verdict),
                "placement": plan.where() if plan.expert_layers else None,
                "installed": [str(p) for p in model.paths],
            }
        )
    return rows


def handle_list(args: argparse.Namespace) -> int:
    """Print the catalog and other installed models with fit verdicts."""
    ctx = context_for(args)
    hardware = _planned_hardware(ctx, args)
    rows = catalog_rows(ctx, hardware) + local_rows(ctx, hardware)
    remote = remote_rows(ctx.net, lambda: ctx.remote_models(max_age_s=0))
    if args.json:
        print(
            json.dumps(
                {
                    "hardware": (hardware or ctx.hardware).describe(),
                    "gpu_offload": ctx.gpu_offload if hardware is None else bool(hardware.gpus),
                    "models": rows + remote,
                },
                indent=2,
            )
        )
        return 0
    if hardware is not None:
        print(f"Planned for: {hardware.describe()}")
    else:
        print(
            f"This machine: {ctx.hardware.describe()}; GPU offload in this build: "
            f"{'yes' if ctx.gpu_offload else 'no'}"
        )
    header = f"{'ID':<22} {'KIND':<10} {'TIER':<12} {'QUANT':<7} {'SIZE':>8}  {'FIT':<26} INSTALLED"
    print(header)
    for row in rows:
        print(
            f"{row['id']:<22} {row['kind']:<10} {row['tier']:<12} "
            f"{row['recommended_quant'] or '-':<7} {_gib(row['size_bytes']):>8}  "
            f"{row['fit']:<26} {'yes' if row['installed'] else '-'}"
        )
        if row.get("placement"):
            print(f"{'':<22} {row['placement']}")
    for rrow in remote:
        print(f"{rrow['id']:<40} {rrow.get('location') or 'unavailable: ' + str(rrow['error'])}")
    return 0


def handle_info(args: argparse.Namespace) -> int:
    """Print the header facts and the load plan of one model."""
    if args.ctx is not None and not 64 <= args.ctx <= 1_048_576:
        raise InvalidRequest(f"--ctx {args.ctx} is out of range; use 64 to 1048576 tokens")
    ctx = context_for(args, moe_settings(args))
    entry = None if looks_like_path(args.model) else ctx.catalog.find(args.model)
    try:
        path, entry, _ = ctx.resolver.locate(args.model)
    except ModelNotFound:
        if entry is None:
            raise
        return _print_catalog_only(ctx, entry, args.json, _planned_hardware(ctx, args))
    info = ctx.resolver.info(path)
    projector = ctx.resolver.projector(args.model, entry)
    hardware = _planned_hardware(ctx, args)
    plan = ctx.resolver.fit(info, args.ctx, projector=projector, hardware=hardware)
    kv_bytes = _kv_bytes(info, plan)
    checkpoints = 0
    if not plan.swa_full:
        checkpoints = info.checkpoint_bytes(plan.context_length, plan.cache_type, plan.parallel)
    data = {
        "model": entry.id if entry else path.name,
        "vision": {"projector": str(projector)} if projector else None,
        "header": info.to_dict(),
        "kv_bytes_per_token": info.kv_bytes_per_token(),
        "kv_cache_bytes": kv_bytes,
        "checkpoint_bytes": checkpoints,
        "plan": {
            "verdict": str(plan.verdict),
            "reason": plan.reason,
            "context_length": plan.context_length,
            "gpu_layers": plan.gpu_layers,
            "total_layers": plan.total_layers,
            "estimated_bytes": plan.estimated_bytes,
            "vram_bytes": plan.vram_bytes,
            "ram_bytes": plan.ram_bytes,
            "repack_bytes": plan.repack_bytes,
            "experts_in_ram_layers": plan.experts_in_ram_layers,
            "expert_layers": plan.expert_layers,
            "n_cpu_moe": plan.n_cpu_moe,
            "placement": plan.where(),
        },
        "hardware": (hardware or ctx.hardware).describe(),
        "planned_for": "this machine" if hardware is None else "the --gpu-memory/--ram machine",
        "broken": _broken_reason(ctx, args.model, path, entry),
    }
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return 0
    print(f"{data['model']}  ({path})")
    print(f"  architecture   {info.architecture}   quant {info.file_type or '?'}")
    print(f"  parameters     {info.parameters / 1e9:.2f} B   weights {_gib(info.weight_bytes)}")
    print(
        f"  layers         {info.block_count}   heads {info.head_count} (KV {info.head_count_kv})"
    )
    print(f"  context        trained {info.context_length}, planned {plan.context_length}")
    print(
        f"  KV cache       {info.kv_bytes_per_token()} bytes/token; "
        f"{_gib(kv_bytes, memory=True)} at context {plan.context_length}, "
        f"{plan.parallel} slot{'s' if plan.parallel != 1 else ''}, {plan.cache_type}"
        f"{_window_note(info, plan, checkpoints)}"
    )
    print(f"  chat template  {'in GGUF' if info.chat_template else 'none in GGUF'}")
    print(
        f"  memory         ~{_gib(plan.estimated_bytes, memory=True)} at context "
        f"{plan.context_length}"
    )
    print(f"  fit            {plan.verdict}: {plan.reason}")
    print(f"  placement      {plan.where()}")
    if hardware is not None:
        print(f"  planned for    {hardware.describe()}")
    print(f"  {_vision(entry, projector)}")
    if data["broken"]:
        print(
            f"  broken         crashed on every load ({data['broken']}); "
            f"edgedesk models retry {args.model} to try again"
        )
    return 0


def _planned_hardware(ctx: ModelsHere, args: argparse.Namespace) -> Hardware | None:
    """The machine ``--gpu-memory``/``--ram`` describe (None: plan for this one)."""
    if args.gpu_memory is None and args.ram is None:
        return None
    gpu = args.gpu_memory
    if gpu is None and not ctx.gpu_offload:
        gpu = 0  # --ram alone: this machine's GPU, which this build does not offload to
    return with_memory(ctx.hardware, gpu_bytes=gpu, ram_bytes=args.ram)


def _broken_reason(ctx: ModelsHere, ref: str, path: Path, entry: ModelEntry | None) -> str | None:
    """Why the model is marked broken (its id as the scheduler names it), or None."""
    marked = ctx.broken_models.marked()
    for name in (ref, entry.id if entry else None, path.stem, path.name):
        if name and name in marked:
            return marked[name]
    return None


def handle_retry(args: argparse.Namespace) -> int:
    """Clear a model's broken mark so its next request loads it again."""
    ctx = context_for(args)
    if ctx.broken_models.clear(args.model):
        print(f"{args.model} will be loaded again at its next request")
    else:
        print(f"{args.model} is not marked broken; nothing to retry")
    return 0


def _kv_bytes(info: GGUFInfo, plan: Fit) -> int:
    """The KV cache the engine allocates for ``plan``."""
    return info.kv_bytes(plan.context_length, plan.cache_type, plan.parallel, plan.swa_full)


def _window_note(info: GGUFInfo, plan: Fit, checkpoints: int) -> str:
    """How a sliding-window model's cache is laid out, for the ``KV cache`` line."""
    if info.sliding_window <= 0:
        return ""
    if plan.swa_full:
        return f" (sliding window {info.sliding_window}: full-size, one cache per slot)"
    return (
        f" (sliding window {info.sliding_window}: {info.swa_layers} of {info.block_count} "
        f"layers keep only it, + {_gib(checkpoints, memory=True)} of checkpoints)"
    )


def _vision(entry: ModelEntry | None, projector: Path | None) -> str:
    """The ``vision:`` line: the projector that lets the model see, or why it cannot."""
    if projector is not None:
        return f"vision: yes (projector {projector})"
    if entry is not None and entry.mmproj:
        return (
            f"vision: no (its projector {entry.mmproj} is not downloaded; run "
            f"'edgedesk models pull {entry.id}' again)"
        )
    return "vision: no"


def _print_catalog_only(
    ctx: ModelsHere, entry: ModelEntry, as_json: bool, hardware: Hardware | None
) -> int:
    """A catalog model not downloaded yet: its verdict for this machine, or for ``hardware``."""
    rows = {r["id"]: r for r in catalog_rows(ctx, hardware)}
    row = rows[entry.id]
    if as_json:
        print(
            json.dumps(
                {
                    **row,
                    "context_length": entry.context_length,
                    "license": entry.license,
                    "notes": entry.notes,
                    "vision": {"projector": entry.mmproj} if entry.mmproj else None,
                    "hardware": (hardware or ctx.hardware).describe(),
                    "planned_for": "this machine"
                    if hardware is None
                    else "the --gpu-memory/--ram machine",
                },
                indent=2,
            )
        )
        return 0
    print(f"{entry.id}  {entry.name}  ({entry.repo}) — not downloaded")
    print(
        f"  kind {entry.kind}, tier {entry.tier}, license {entry.license}, "
        f"context {entry.context_length}"
    )
    print(f"  quants: {', '.join(f'{q.name} ({_gib(q.size)})' for q in entry.quants)}")
    where = "here" if hardware is None else "there"
    print(f"  recommended {where}: {row['recommended_quant'] or 'none'} — {row['fit']}")
    if row.get("placement"):
        print(f"  placement      {row['placement']}")
    if hardware is not None:
        print(f"  planned for    {hardware.describe()}")
    if entry.mmproj:
        print(
            f"  vision: yes (projector {entry.mmproj}, {_gib(entry.mmproj_size)}, "
            "pulled with the model)"
        )
    if entry.notes:
        print(f"  note: {entry.notes}")
    return 0
