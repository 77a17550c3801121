"""Every tool a chat may call: the built-in ones the core adds, then the tools of the MCP
servers the policy allows, each call timed and written to the audit log.

``ToolBox.call`` never raises for a tool that fails: the model is given the failure as
the tool's result (so it can say so or try otherwise) and the audit log records it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from desktop.base.errors import EdgeDeskError
from desktop.engine import ToolSpec as EngineToolSpec
from desktop.tools._approvals import Approvals
from desktop.tools._call_log import ToolAudit, ToolCallRecord, now
from desktop.tools._mcp_client import McpClients
from desktop.tools._servers import ServerConfig, ServerList
from desktop.tools._types import BUILTIN, ToolError, ToolResult, ToolSpec

# Any: a built-in tool's JSON arguments, by its own schema
Handler = Callable[[dict[str, Any]], ToolResult]


def own_name(spec: ToolSpec) -> str:
    """The tool's name on its server (the model may know it as ``SERVER__NAME``)."""
    return spec.name.removeprefix(f"{spec.server}__")


@dataclass(frozen=True)
class BuiltinTool:
    """A tool EdgeDesk itself runs (read-only over what the user gave it)."""

    spec: ToolSpec
    run: Handler


@dataclass(frozen=True)
class ServerState:
    """A configured server as the Tools page and ``tools list`` show it."""

    config: ServerConfig
    refusal: str | None  # why the policy keeps it from running (None: allowed)
    tools: tuple[ToolSpec, ...] = ()
    error: str | None = None  # why it could not be started or listed


@dataclass
class ToolSet:
    """The tools offered for one answer, by the name the model calls."""

    specs: dict[str, ToolSpec] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # servers that could not start

    def offered(self) -> tuple[EngineToolSpec, ...]:
        """The tools as the engine offers them to the model (``ChatCall.tools``)."""
        return tuple(spec.offered() for spec in self.specs.values())


class ToolBox:
    """Built-ins plus allowed MCP servers' tools; calls them and audits every call.

    Threads: every method blocks and may be called from any thread (a chat's worker, a
    server route, the CLI); MCP sessions run on ``McpClients``' own thread.
    """

    def __init__(
        self,
        servers: ServerList,
        clients: McpClients,
        audit: ToolAudit,
        builtins: Sequence[BuiltinTool] = (),
        *,
        only: Collection[str] | None = None,
        approvals: Approvals | None = None,
    ) -> None:
        self.servers = servers
        self.clients = clients
        self.audit = audit
        self.builtins = {b.spec.name: b for b in builtins}
        self.only = frozenset(only) if only is not None else None  # None: every server
        self.approvals = approvals  # "Always for this tool" kept across restarts (None: not)

    def limited(self, names: Collection[str]) -> ToolBox:
        """The same servers and clients, offering only the servers ``names`` (no
        built-ins): what an API request that names its MCP servers may call."""
        return ToolBox(self.servers, self.clients, self.audit, only=names)

    def always_allowed(self, spec: ToolSpec) -> bool:
        """Whether the user said "Always" for this tool before (never under
        McpRequireApproval)."""
        return (
            not self.require_approval
            and self.approvals is not None
            and self.approvals.has(spec.server, own_name(spec))
        )

    def remember(self, spec: ToolSpec) -> None:
        """Keep an "Always for this tool" answer across restarts (not under
        McpRequireApproval)."""
        if not self.require_approval and self.approvals is not None:
            self.approvals.add(spec.server, own_name(spec))

    @property
    def require_approval(self) -> bool:
        """Whether policy McpRequireApproval makes every MCP call ask (no "Always")."""
        return self.servers.policy.require_approval

    def states(self, *, start: bool = True) -> list[ServerState]:
        """Every configured server, whether it may run, and (``start``) its tools."""
        found = []
        for config in self.servers.all():
            if self.only is not None and config.name not in self.only:
                continue
            reason = self.servers.refusal(config)
            if reason is not None or not start:
                found.append(ServerState(config, reason))
                continue
            try:
                found.append(ServerState(config, None, tuple(self.clients.tools(config))))
            except EdgeDeskError as exc:
                found.append(ServerState(config, None, error=exc.message))
        return found

    def available(self, *, mcp: bool = True, builtins: bool = True) -> ToolSet:
        """The tools to offer now: built-ins (unless not wanted), then allowed servers'
        (started if needed)."""
        found = ToolSet({name: b.spec for name, b in self.builtins.items()} if builtins else {})
        if not mcp:
            return found
        try:
            states = self.states()
        except EdgeDeskError as exc:  # a damaged mcp.json: chat on with the built-ins
            found.problems.append(exc.message)
            return found
        for state in states:
            if state.error is not None:
                found.problems.append(state.error)
            for spec in state.tools:
                name = (
                    spec.name
                    if spec.name not in found.specs
                    else f"{state.config.name}__{spec.name}"
                )
                found.specs[name] = ToolSpec(name, spec.description, spec.parameters, spec.server)
        return found

    def call(
        self, spec: ToolSpec, arguments: str, cancel: threading.Event | None = None
    ) -> ToolResult:
        """Run one call (arguments as JSON text); a failure comes back as an error result.
        ``cancel`` (Stop) abandons an MCP call still waiting for its server."""
        started = time.perf_counter()
        error = ""
        try:
            args = json.loads(arguments or "{}")
            if not isinstance(args, dict):
                raise ValueError("the arguments are not a JSON object")
        except ValueError as exc:
            result = ToolResult(
                f"error: the arguments of {spec.name} are not valid JSON ({exc})", True
            )
            error = "bad_arguments"
        else:
            result, error = self._run(spec, args, cancel)
        self.audit.write(
            ToolCallRecord(
                now(),
                spec.name,
                spec.server,
                round((time.perf_counter() - started) * 1000, 2),
                not result.is_error,
                error,
            )
        )
        return result

    def record_denied(self, spec: ToolSpec) -> None:
        """Audit a call the user (or the policy) did not allow."""
        self.audit.write(ToolCallRecord(now(), spec.name, spec.server, 0.0, False, "denied"))

    # Any: JSON arguments the model wrote, by the tool's own schema
    def _run(
        self, spec: ToolSpec, args: dict[str, Any], cancel: threading.Event | None
    ) -> tuple[ToolResult, str]:
        """The result and, for a failure, its kind for the audit log ("" when ok)."""
        if spec.server == BUILTIN:
            return self._run_builtin(spec, args)
        return self._run_mcp(spec, args, cancel)

    # Any: JSON arguments the model wrote, by the tool's own schema
    def _run_builtin(self, spec: ToolSpec, args: dict[str, Any]) -> tuple[ToolResult, str]:
        builtin = self.builtins.get(spec.name)
        if builtin is None:
            return ToolResult(f"error: no tool named {spec.name}", True), "unknown_tool"
        try:
            result = builtin.run(args)
        except EdgeDeskError as exc:
            return ToolResult(f"error: {exc.message}", True), "failed"
        return result, "" if not result.is_error else "failed"

    # Any: JSON arguments the model wrote, by the tool's own schema
    def _run_mcp(
        self, spec: ToolSpec, args: dict[str, Any], cancel: threading.Event | None
    ) -> tuple[ToolResult, str]:
        try:
            config = self.servers.get(spec.server)
            reason = self.servers.refusal(config)
            if reason is not None:
                return ToolResult(f"error: {reason}", True), "refused"
            result = self.clients.call(config, own_name(spec), args, cancel=cancel)
        except ToolError as exc:
            return ToolResult(f"error: {exc.message}", True), exc.kind or "failed"
        except EdgeDeskError as exc:
            return ToolResult(f"error: {exc.message}", True), "failed"
        return result, "" if not result.is_error else "tool_error"
