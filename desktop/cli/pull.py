"""``edgedesk models pull|rm|import|search``: get models onto this machine and off it again."""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import TextIO

from desktop.base.crash import shown
from desktop.base.errors import EdgeDeskError, ModelNotFound
from desktop.base.filebytes import format_bytes
from desktop.catalog import (
    Catalog,
    InstalledModel,
    Progress,
    PullTarget,
    discard_partial,
    discover_hf_cache,
    hf_home,
    model_id_for,
    parse_target,
    partial_files,
    pull,
)
from desktop.cli.arguments import context_for


def register_models(msub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``pull``, ``rm``, ``import`` and ``search`` to ``edgedesk models``."""
    from desktop.cli.options import common_options

    common = common_options()
    p = msub.add_parser(
        "pull",
        parents=[common],
        help="download a model (resumable, verified)",
        description="Download a catalog model (ID) or any GGUF on the Hub "
        "(REPO:FILE); interrupted pulls resume where they stopped.",
    )
    p.add_argument("model", metavar="ID|REPO:FILE")
    p.add_argument("--quant", metavar="Q", help="quantization of a catalog model (e.g. Q8_0)")
    p.set_defaults(handler=handle_pull)
    r = msub.add_parser(
        "rm",
        parents=[common],
        help="remove an installed model, or the partial files of a paused pull",
    )
    r.add_argument("model", metavar="ID")
    r.set_defaults(handler=handle_rm)
    i = msub.add_parser(
        "import",
        parents=[common],
        help="register a local GGUF in place (hashed and checked, not copied)",
    )
    i.add_argument("path", metavar="PATH", nargs="?")
    i.add_argument(
        "--mmproj",
        metavar="PROJECTOR",
        type=Path,
        default=None,
        help="the vision projector (mmproj GGUF) that lets this model see images",
    )
    i.add_argument(
        "--hf-cache",
        action="store_true",
        help="register every GGUF found in the Hugging Face cache (HF_HOME)",
    )
    i.set_defaults(handler=handle_import)
    s = msub.add_parser("search", parents=[common], help="find GGUF repos on the Hub")
    s.add_argument("query", metavar="QUERY")
    s.add_argument("--limit", type=int, default=10, metavar="N")
    s.add_argument("--json", action="store_true")
    s.set_defaults(handler=handle_search)


def _eta(seconds: float | None) -> str:
    if seconds is None:
        return "--:--"
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


class ProgressLine:
    """A one-line progress bar on a terminal; a line every few seconds in logs and pipes."""

    def __init__(self, stream: TextIO, *, every_s: float = 5.0) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.every_s = every_s
        self._last = 0.0

    def __call__(self, p: Progress) -> None:
        """Show ``p``."""
        pct = 100 * p.done / p.total if p.total else 100.0
        text = (
            f"{p.filename}: {pct:5.1f}%  {format_bytes(p.done)} / {format_bytes(p.total)}  "
            f"{format_bytes(p.speed_bps)}/s  ETA {_eta(p.eta_s)}"
        )
        now = time.monotonic()
        if self.tty:
            self.stream.write("\r" + text.ljust(78))
        elif now - self._last >= self.every_s or p.done >= p.total:
            self.stream.write(text + "\n")
        else:
            return
        self._last = now
        self.stream.flush()

    def end(self) -> None:
        """Finish the line on a terminal."""
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


def handle_pull(args: argparse.Namespace) -> int:
    """Download, verify and install one model."""
    ctx = context_for(args)
    target = parse_target(args.model, ctx.catalog, args.quant)
    ctx.net.ensure_online(f"pull {args.model}", download=True)  # fail before any lookup
    bar = ProgressLine(sys.stderr)
    cancel = threading.Event()
    try:
        model = pull(
            target,
            hub=ctx.hub,
            downloader=ctx.downloader(),
            index=ctx.installed,
            models_dir=ctx.paths.models_dir,
            progress=bar,
            cancel=cancel,
        )
    except KeyboardInterrupt:
        cancel.set()
        print("edgedesk: paused; run the same command again to resume", file=sys.stderr)
        return 130
    finally:
        bar.end()
    print(
        f"installed {model.id} ({format_bytes(model.size)}, SHA-256 verified) from "
        f"{model.repo}@{(model.revision or '')[:12]}"
    )
    for path in model.paths:
        print(f"  {path}")
    if model.projector_path is not None:
        print(f"  {model.projector_path} (vision projector)")
    return 0


def handle_rm(args: argparse.Namespace) -> int:
    """Forget an installed model (deleting files we downloaded) and its partial download."""
    ctx = context_for(args)
    target = _pull_target(args.model, ctx.catalog)
    models_dir = ctx.paths.models_dir
    partial = target is not None and bool(
        partial_files(target, index=ctx.installed, models_dir=models_dir)
    )
    # The partial files go first: a pull still writing them stops rm before any change.
    freed = (
        discard_partial(
            target, downloader=ctx.downloader(), index=ctx.installed, models_dir=models_dir
        )
        if target is not None and partial
        else 0
    )
    model: InstalledModel | None = None
    try:
        model = ctx.installed.remove(args.model)
    except ModelNotFound:
        if not partial:
            raise
    if model is not None:
        kept = "" if model.managed else " (imported file left in place)"
        print(f"removed {model.id}{kept}")
    if partial:
        print(f"deleted the partial download of {args.model} ({format_bytes(freed)} freed)")
    return 0


def _pull_target(ref: str, catalog: Catalog) -> PullTarget | None:
    """The pull ``ref`` names (catalog ``ID``, ``ID:QUANT`` or ``REPO:FILE``), if any."""
    entry_id, _, quant = ref.partition(":")
    try:
        if "/" in ref:
            return parse_target(ref, catalog)
        return parse_target(entry_id, catalog, quant or None)
    except EdgeDeskError:
        return None  # an imported or REPO:FILE-pulled model's id: nothing to resume


def handle_import(args: argparse.Namespace) -> int:
    """Register a local GGUF, or every GGUF in the Hugging Face cache."""
    ctx = context_for(args)
    if args.hf_cache and args.mmproj:
        from desktop.base.errors import InvalidRequest

        raise InvalidRequest("--mmproj goes with one model's PATH, not --hf-cache")
    if args.hf_cache:
        found = discover_hf_cache(hf_home(os.environ))
        if not found:
            print(f"no GGUF files in {hf_home(os.environ) / 'hub'}")
        for cached in found:
            model = ctx.installed.import_file(
                cached.path, source="hf-cache", repo=cached.repo, revision=cached.revision
            )
            print(
                f"imported {shown(model.id)} ({format_bytes(model.size)}) from the Hugging Face "
                "cache"
            )
        return 0
    if not args.path:
        from desktop.base.errors import InvalidRequest

        raise InvalidRequest(
            "give a PATH to a .gguf file, or --hf-cache"
            + (" (--mmproj goes with the model's PATH)" if args.mmproj else "")
        )
    model = ctx.installed.import_file(Path(args.path), projector=args.mmproj)
    print(
        f"imported {shown(model.id)} ({format_bytes(model.size)}, SHA-256 "
        f"{model.sha256[0][:16]}…) from {shown(model.paths[0])}"
    )
    if model.projector_path is not None:
        print(f"  vision: yes (projector {shown(model.projector_path)})")
    named = model_id_for(Path(args.path).name)
    if named in ctx.installed.reserved_ids:
        print(
            f"note: '{shown(named)}' is a catalog id, so this file is known as "
            f"'{shown(model.id)}'; 'edgedesk models pull {shown(named)}' gets the catalog's",
            file=sys.stderr,
        )
    return 0


def handle_search(args: argparse.Namespace) -> int:
    """List GGUF repos on the Hub matching the query, with quants and sizes."""
    ctx = context_for(args)
    hits = ctx.hub.search(args.query, limit=max(1, min(args.limit, 50)))
    if args.json:
        rows: list[dict[str, object]] = [
            {
                "repo": h.repo,
                "downloads": h.downloads,
                "quants": [
                    {"quant": q.quant, "files": list(q.files), "size": q.size} for q in h.quants
                ],
            }
            for h in hits
        ]
        print(json.dumps(rows, indent=2))
        return 0
    if not hits:
        print(f"no GGUF repositories match '{args.query}'")
    for hit in hits:
        print(f"{hit.repo}  ({hit.downloads} downloads)")
        for q in hit.quants:
            shards = f", {len(q.files)} files" if len(q.files) > 1 else ""
            print(
                f"  {q.quant:<10} {format_bytes(q.size):>9}{shards}  "
                f"edgedesk models pull {hit.repo}:{q.files[0]}"
            )
    return 0
