"""``edgedesk serve``: the local OpenAI-compatible API, headless, until Ctrl+C or SIGTERM."""

from __future__ import annotations

import argparse
import errno
import ipaddress
import logging
import re
import socket
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from desktop.base.config import MIN_BODY_BYTES
from desktop.base.crash import shown
from desktop.base.defaults import MAX_TOKENS_LIMIT
from desktop.base.errors import EdgeDeskError, InvalidRequest
from desktop.cli.arguments import context_for
from desktop.cli.options import moe_settings
from desktop.resolve import ModelResolver, looks_like_path

LOG_LEVELS = ("debug", "info", "warning", "error")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``serve`` verb."""
    from desktop.cli.options import common_options, moe_options

    parser = sub.add_parser(
        "serve",
        parents=[common_options(), moe_options()],
        help="serve the local OpenAI-compatible API",
        description="Serve http://HOST:PORT/v1 for IDEs and scripts. A key is required "
        "unless --no-auth (loopback only); create one with 'edgedesk keys create NAME'.",
    )
    parser.add_argument("--host", default=None, help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=None, help="port (default 8765)")
    parser.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="ID_OR_PATH",
        help="a catalog id or .gguf path to offer (repeatable)",
    )
    parser.add_argument(
        "--no-preload",
        action="store_true",
        help="load each --model on its first request instead of at start",
    )
    auth = parser.add_mutually_exclusive_group()
    auth.add_argument(
        "--no-auth",
        action="store_true",
        help="accept requests without a key (only on a loopback address)",
    )
    auth.add_argument(
        "--require-key",
        action="store_true",
        help="require an API key (the default; overrides require_key = false)",
    )
    parser.add_argument(
        "--allowed-origins",
        default=None,
        metavar="URL[,URL…]",
        help="browser origins allowed by CORS, comma-separated ('' for none)",
    )
    parser.add_argument(
        "--max-body-bytes",
        type=int,
        default=None,
        metavar="N",
        help="largest request body accepted (default 8 MiB; 413 above)",
    )
    parser.add_argument(
        "--max-tokens-limit",
        type=int,
        default=None,
        metavar="N",
        help=f"most tokens one answer may generate (default {MAX_TOKENS_LIMIT}; "
        "larger requests are lowered to it)",
    )
    parser.add_argument(
        "--log-level",
        default="warning",
        type=str.lower,
        choices=LOG_LEVELS,
        help="console log: info prints one line per request, debug adds "
        "the engine's lines (default warning)",
    )
    parser.set_defaults(handler=handle)


def check_host(host: str) -> None:
    """Refuse a ``--host`` that names no address of this machine, before binding.

    An empty one would make uvicorn listen on every interface, the opposite of what a
    person leaving it blank expects; a mistyped one would fail as "port in use".
    """
    if not host.strip():
        raise InvalidRequest(
            "--host is empty; give an address such as 127.0.0.1 (the default, this machine only)",
            param="host",
        )
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        pass
    else:
        _check_local(address)
        return
    if re.fullmatch(r"[\d.]+", host) or not re.fullmatch(r"[A-Za-z0-9.-]{1,253}", host):
        raise InvalidRequest(
            f"--host {shown(host, 80)} is not an IP address or host name; use e.g. 127.0.0.1",
            param="host",
        )
    try:
        socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        raise InvalidRequest(
            f"--host {shown(host, 80)} is not an address of this machine; use e.g. 127.0.0.1",
            param="host",
        ) from None


def _check_local(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> None:
    """Refuse an address no interface of this machine has (binding says "cannot assign")."""
    family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((str(address), 0))
        except OSError as exc:
            if exc.errno == errno.EADDRNOTAVAIL:
                raise InvalidRequest(
                    f"--host {address} is not an address of this machine; "
                    "use 127.0.0.1 (this machine only) or one of its "
                    "network addresses",
                    param="host",
                ) from None


def _overrides(args: argparse.Namespace) -> dict[str, object]:
    """The ``[server]`` settings the flags override (the composition root applies them)."""
    overrides: dict[str, object] = dict(moe_settings(args))
    if args.host is not None:
        check_host(args.host)
    if args.port is not None and not 1 <= args.port <= 65535:
        raise InvalidRequest(f"--port {args.port} is out of range; use 1 to 65535", param="port")
    if args.host is not None:
        overrides["server.host"] = args.host
    if args.port is not None:
        overrides["server.port"] = args.port
    if args.no_auth:
        overrides["server.require_key"] = False
    if args.require_key:
        overrides["server.require_key"] = True
    if args.allowed_origins is not None:
        overrides["server.allowed_origins"] = [
            o.strip() for o in args.allowed_origins.split(",") if o.strip()
        ]
    if args.max_body_bytes is not None:
        if args.max_body_bytes < MIN_BODY_BYTES:
            raise InvalidRequest(
                f"--max-body-bytes {args.max_body_bytes} is too small; use "
                f"at least {MIN_BODY_BYTES}",
                param="max_body_bytes",
            )
        overrides["server.max_body_bytes"] = args.max_body_bytes
    if args.max_tokens_limit is not None:
        if args.max_tokens_limit < 1:
            raise InvalidRequest("--max-tokens-limit must be at least 1", param="max_tokens_limit")
        overrides["server.max_tokens_limit"] = args.max_tokens_limit
    return overrides


def configure_logging(level: str) -> None:
    """Print EdgeDesk's log lines at ``level`` and above on stderr (one handler, once).

    ``info`` shows the access log's line per request (``edgedesk.access``) and the
    server's notes (tools left out); ``debug`` adds the engine's (``edgedesk.engine``).
    """
    logger = logging.getLogger("edgedesk")
    logger.setLevel(level.upper())
    if not any(getattr(h, "edgedesk_console", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        handler.edgedesk_console = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
        # This handler is the console: a handler a library puts on the root logger (the
        # MCP SDK adds one when /mcp is built) would print every line a second time.
        logger.propagate = False


def offer_models(resolver: ModelResolver, models: list[str]) -> None:
    """Check each ``--model`` id now (not on the first request), then register each
    ``.gguf`` path under its id so that the server offers it."""
    for ref in models:
        if not looks_like_path(ref):
            resolver.locate(ref)  # fail now, not on the first request
    for ref in models:
        if looks_like_path(ref):
            resolver.register(Path(ref))


class Loader(Protocol):
    """What ``preload`` needs of the scheduler."""

    def load(self, model: str) -> object:
        """Load ``model`` now (blocking)."""
        ...


def preload(scheduler: Loader, resolver: ModelResolver, refs: Sequence[str]) -> None:
    """Load each named local model now, one after another (blocking), as llama-server
    loads its model before it answers: the first request then waits for no load. A
    model that fails is said on the console, and the server goes on (its requests get
    the load's error in their own protocol's shape)."""
    ids: list[str] = []
    for ref in refs:
        try:
            spec = resolver(ref)
        except EdgeDeskError:
            continue  # said when it is first asked for, as in the start-up line
        if spec.path is not None and spec.model_id not in ids:  # a remote runs elsewhere
            ids.append(spec.model_id)
    for model_id in ids:
        try:
            scheduler.load(model_id)
        except EdgeDeskError as exc:
            print(f"edgedesk: {model_id} was not loaded at start: {exc.message}", file=sys.stderr)


def _where_models_run(resolver: ModelResolver, models: list[str]) -> str:
    """``gemma: 19/19 layers on Vulkan0 (llvmpipe)`` for each ``--model`` (planned from its
    header, before its load ends; /v1/models and ``run --stats`` then say where it
    did), or where any local model would run when none is named."""
    from desktop.engine import default_devices, planned_placement

    parts = []
    for ref in models:
        try:
            spec = resolver(ref)
            if spec.path is None:  # a remote NAME/MODEL runs elsewhere
                continue
            info = resolver.info(spec.file)
        except EdgeDeskError:
            continue  # said when it is first asked for
        experts = spec.local.n_cpu_moe if spec.local else 0
        where = planned_placement(info.block_count, spec.gpu_layers or 0, experts).describe()
        parts.append(f"{spec.model_id}: {where}")
    if parts:
        return "; ".join(parts)
    devices = default_devices()
    return (
        f"local models run on {', '.join(devices)}"
        if devices
        else "local models run on the CPU only"
    )


def handle(args: argparse.Namespace) -> int:
    """Run the verb; returns the exit code once the server has stopped."""
    overrides = _overrides(args)
    configure_logging(args.log_level)
    ctx = context_for(args, overrides)
    try:
        offer_models(ctx.resolver, args.model)
        runner = ctx.server.runner  # the context's: closing the context stops it
        settings = runner.settings
        if settings.require_key and not ctx.key_store.list():
            print(
                "edgedesk: no API keys yet; create one with 'edgedesk keys create NAME'",
                file=sys.stderr,
            )

        def ready(url: str) -> None:
            auth = "key required" if settings.require_key else "NO AUTH (loopback only)"
            print(
                f"Serving the OpenAI-compatible API on {url} ({auth}); {where}; Ctrl+C stops",
                file=sys.stderr,
                flush=True,
            )
            # The named models (and engine.preload's) load while the server already
            # answers; a request for one waits for its load, as it would on its own.
            # Daemon: Ctrl+C during a load stops the server at once (the scheduler closes
            # what the load makes).
            if not args.no_preload:
                named = [*args.model, *map(str, ctx.settings.engine.preload)]
                threading.Thread(
                    target=preload,
                    args=(ctx.scheduler, ctx.resolver, named),
                    name="edgedesk-preload",
                    daemon=True,
                ).start()

        where = _where_models_run(ctx.resolver, args.model)

        # Headless, nothing else unloads idle models or rescans collections.
        ctx.housekeeping.start()
        runner.serve_forever(on_ready=ready)
    finally:
        ctx.close()
    return 0
