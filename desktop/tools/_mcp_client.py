"""Sessions with MCP servers (the official ``mcp`` SDK) behind blocking calls.

The SDK is asyncio. ``McpClients`` runs one event loop on its own daemon thread
(``edgedesk-mcp``, started on first use); every public method may be called from any
thread, hands a coroutine to that loop and blocks on its result with a deadline, so a
server that crashes or hangs ends in a ``ToolError`` naming it, never a stuck caller.
A server starts on its first use (its process, or its HTTP session) and stops after
``idle_s`` without calls, or when it timed out (it is restarted on the next call).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import os
import threading
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO, TypeVar

from desktop.base.net import NetGate
from desktop.tools._servers import ServerConfig, token_get
from desktop.tools._types import ToolError, ToolResult, ToolSpec

T = TypeVar("T")
START_TIMEOUT_S = 20.0
CALL_TIMEOUT_S = 30.0
IDLE_S = 300.0
RETRY_AFTER_S = 60.0  # a server that failed to start is not tried again sooner
MAX_RESULT_CHARS = 64_000  # a tool's answer beyond this is cut for the model's context


@dataclass
class _Session:
    """One running server: its session and the task that holds it open."""

    config: ServerConfig
    session: Any = None
    tools: list[ToolSpec] = field(default_factory=list)
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    ready: asyncio.Future[None] | None = None  # done once the tools are listed
    last_used: float = field(default_factory=time.monotonic)
    busy: int = 0  # calls in flight: never idle while one runs

    def idle_for(self, now: float) -> float:
        """Seconds since the last use; 0 while starting or serving a call."""
        if self.busy or self.ready is None or not self.ready.done():
            return 0.0
        return now - self.last_used


def result_text(result: Any) -> ToolResult:
    """An MCP ``CallToolResult`` as text for the model (long answers cut, marked)."""
    parts: list[str] = []
    for block in getattr(result, "content", None) or []:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(str(block.text))
        elif kind == "resource" and hasattr(block.resource, "text"):
            parts.append(str(block.resource.text))
        else:
            parts.append(f"[{kind or 'content'} omitted]")
    structured = getattr(result, "structured_content", None)
    if not parts and structured is not None:
        parts.append(json.dumps(structured, ensure_ascii=False))
    text = "\n".join(parts)
    if len(text) > MAX_RESULT_CHARS:
        text = (
            text[:MAX_RESULT_CHARS] + f"\n[… cut: {len(text) - MAX_RESULT_CHARS} more "
            "characters the tool returned]"
        )
    return ToolResult(text, bool(getattr(result, "is_error", False)))


class McpClients:
    """Blocking access to MCP servers; one asyncio thread of its own.

    Threads: ``tools``, ``call``, ``stop`` and ``close`` block and are called from any
    thread (a chat's worker, a server route, the CLI); the SDK only ever runs on the
    client's own thread.
    """

    def __init__(
        self,
        *,
        gate: NetGate | None = None,
        log_dir: Path | None = None,
        token: Callable[[str], str | None] = token_get,
        start_timeout_s: float = START_TIMEOUT_S,
        call_timeout_s: float = CALL_TIMEOUT_S,
        idle_s: float = IDLE_S,
    ) -> None:
        self._gate = gate  # HTTP servers' requests are checked and logged here
        self._log_dir = log_dir  # servers' stderr goes to mcp-NAME.log here
        self._token = token
        self.start_timeout_s = start_timeout_s
        self.call_timeout_s = call_timeout_s
        self.idle_s = idle_s
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._sessions: dict[str, _Session] = {}  # touched on the loop's thread only
        self._background: set[asyncio.Task[None]] = set()  # stops under way, reaper
        # name -> (config, when, error) of a failed start: every chat turn lists the tools,
        # and a server that hangs at start must not cost each turn the start timeout.
        self._failed: dict[str, tuple[ServerConfig, float, ToolError]] = {}

    # ------------------------------------------------------------ any thread
    def tools(self, config: ServerConfig) -> list[ToolSpec]:
        """The tools ``config`` offers (starts it if it is not running)."""
        return self._run(self._tools(config), self.start_timeout_s + 5)

    def call(
        self,
        config: ServerConfig,
        tool: str,
        # Any: JSON arguments the model wrote, by the tool's own schema
        arguments: dict[str, Any],
        timeout_s: float | None = None,
        cancel: threading.Event | None = None,
    ) -> ToolResult:
        """Call ``tool``; ToolError when the server cannot start, crashes or times out, or
        at once when ``cancel`` is set (Stop: the request is cancelled at the server)."""
        limit = timeout_s or self.call_timeout_s
        return self._run(
            self._call(config, tool, arguments, limit), self.start_timeout_s + limit + 5, cancel
        )

    def retry(self, name: str) -> None:
        """Forget ``name``'s failed start: the next use starts it again at once (the user
        asked to retry; chat turns otherwise wait ``RETRY_AFTER_S`` before trying again)."""
        self._failed.pop(name, None)

    def log_path(self, name: str) -> Path | None:
        """Where server ``name``'s own messages (its stderr) are written (None: nowhere)."""
        return None if self._log_dir is None else self._log_dir / f"mcp-{name}.log"

    def log_tail(self, name: str, lines: int = 12) -> str:
        """The last ``lines`` lines server ``name`` wrote to its log ("" when none)."""
        path = self.log_path(name)
        if path is None:
            return ""
        try:
            with path.open("rb") as handle:
                handle.seek(0, os.SEEK_END)
                handle.seek(max(0, handle.tell() - 16_384))  # the tail is enough
                text = handle.read().decode("utf-8", "replace")
        except OSError:
            return ""
        return "\n".join(text.rstrip().splitlines()[-lines:])

    def running(self) -> list[str]:
        """Names of the servers running now."""
        return list(self._sessions)

    def stop(self, name: str) -> None:
        """Stop server ``name`` if it runs."""
        if self._loop is not None:
            self._run(self._stop(name), 15)

    def close(self) -> None:
        """Stop every server and the loop's thread (app exit)."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        with contextlib.suppress(ToolError):
            self._run(self._stop_all(), 15)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        self._loop = self._thread = None

    def _run(
        self, coro: Coroutine[Any, Any, T], deadline_s: float, cancel: threading.Event | None = None
    ) -> T:
        loop = self._started()
        future = asyncio.run_coroutine_threadsafe(coro, loop)
        deadline = time.monotonic() + deadline_s
        while True:
            try:
                return future.result(0.1 if cancel is not None else deadline_s)
            except concurrent.futures.TimeoutError:
                if cancel is not None and cancel.is_set():
                    future.cancel()
                    raise ToolError(
                        "stopped before the tool server answered", kind="cancelled"
                    ) from None
                if time.monotonic() >= deadline:
                    future.cancel()
                    raise ToolError("a tool server did not answer in time") from None

    def _started(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def serve() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    reaper = loop.create_task(self._reap_idle())
                    loop.run_forever()
                    reaper.cancel()
                    with contextlib.suppress(BaseException):
                        loop.run_until_complete(reaper)
                    loop.close()

                self._thread = threading.Thread(target=serve, name="edgedesk-mcp", daemon=True)
                self._thread.start()
                ready.wait()
                self._loop = loop
            return self._loop

    # ------------------------------------------------------------ the loop's thread
    async def _tools(self, config: ServerConfig) -> list[ToolSpec]:
        held = await self._session(config)
        held.last_used = time.monotonic()
        return list(held.tools)

    # Any: JSON arguments the model wrote, by the tool's own schema
    async def _call(
        self, config: ServerConfig, tool: str, arguments: dict[str, Any], limit: float
    ) -> ToolResult:
        held = await self._session(config)
        held.busy += 1
        try:
            result = await asyncio.wait_for(held.session.call_tool(tool, arguments), limit)
        except TimeoutError:
            self._stop_soon(config.name)  # hung: restarted on the next call
            raise ToolError(
                f"the tool server '{config.name}' did not answer '{tool}' within "
                f"{limit:g} s; it was stopped",
                kind="tool_timeout",
            ) from None
        except ToolError:
            raise
        except Exception as exc:
            self._stop_soon(config.name)
            raise ToolError(
                f"the tool server '{config.name}' failed while running '{tool}' ({_why(exc)})",
                kind="tool_failed",
            ) from None
        finally:
            held.busy -= 1
            held.last_used = time.monotonic()
        return result_text(result)

    async def _session(self, config: ServerConfig) -> _Session:
        held = self._sessions.get(config.name)
        if held is not None and (held.config != config or held.task is None or held.task.done()):
            await self._stop(config.name)
            held = None
        failed = self._failed.get(config.name)
        if (
            held is None
            and failed is not None
            and failed[0] == config
            and time.monotonic() - failed[1] < RETRY_AFTER_S
        ):
            raise failed[2]
        if held is None:  # first use (or a changed entry): start it
            held = _Session(config)
            held.ready = asyncio.get_running_loop().create_future()
            held.task = asyncio.get_running_loop().create_task(self._hold(held, held.ready))
            self._sessions[config.name] = held
        ready = held.ready
        assert ready is not None
        try:
            await asyncio.wait_for(asyncio.shield(ready), self.start_timeout_s)
        except TimeoutError:
            self._stop_soon(config.name)
            raise self._remember(
                config,
                ToolError(
                    f"the tool server '{config.name}' did not start within "
                    f"{self.start_timeout_s:g} s ({config.target})",
                    kind="tool_timeout",
                ),
            ) from None
        except Exception as exc:
            self._sessions.pop(config.name, None)
            raise self._remember(
                config,
                ToolError(
                    f"the tool server '{config.name}' could not start ({_why(exc)}; "
                    f"{config.target})",
                    kind="tool_failed",
                ),
            ) from None
        self._failed.pop(config.name, None)
        return held

    def _remember(self, config: ServerConfig, error: ToolError) -> ToolError:
        self._failed[config.name] = (config, time.monotonic(), error)
        return error

    async def _hold(self, held: _Session, ready: asyncio.Future[None]) -> None:
        """Open the transport and session, list the tools, keep them open until stopped."""
        from mcp import ClientSession

        config = held.config
        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await self._open(config, stack)
                session = await stack.enter_async_context(
                    ClientSession(read, write, read_timeout_seconds=None)
                )
                await session.initialize()
                listed = await session.list_tools()
                held.session = session
                held.tools = [
                    ToolSpec(t.name, t.description or "", dict(t.input_schema or {}), config.name)
                    for t in listed.tools
                ]
                held.last_used = time.monotonic()  # idle from now, not from the spawn
                if not ready.done():
                    ready.set_result(None)
                await held.stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError("stopped"))
            if not isinstance(exc, Exception):
                raise
        finally:
            if self._sessions.get(config.name) is held:
                del self._sessions[config.name]

    async def _open(self, config: ServerConfig, stack: contextlib.AsyncExitStack) -> Any:
        """The transport's read and write streams, closed (with the process or the HTTP
        connections) when ``stack`` closes."""
        if config.is_http:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            headers = dict(config.headers)
            token = self._token(config.name)
            if token:
                headers["Authorization"] = f"Bearer {token}"
            gate = self._gate

            async def check(request: Any) -> None:
                if gate is not None:
                    gate.check(
                        request.method, str(request.url), f"call the MCP tool server {config.name}"
                    )

            client = httpx2.AsyncClient(
                headers=headers,
                event_hooks={"request": [check]},
                timeout=httpx2.Timeout(30.0, read=300.0),
            )
            await stack.enter_async_context(client)  # the SDK leaves a given client open
            return await stack.enter_async_context(
                streamable_http_client(config.url, http_client=client)
            )
        from mcp import StdioServerParameters, stdio_client

        params = StdioServerParameters(
            command=config.command, args=list(config.args), env=dict(config.env) or None
        )
        return await stack.enter_async_context(
            stdio_client(params, errlog=self._errlog(config, stack))
        )

    def _errlog(self, config: ServerConfig, stack: contextlib.AsyncExitStack) -> TextIO:
        # A server's own messages go to a log of its own, not into the terminal or window.
        if self._log_dir is None:
            target = os.devnull
        else:
            self._log_dir.mkdir(parents=True, exist_ok=True)
            target = str(self._log_dir / f"mcp-{config.name}.log")
        handle = open(target, "a", encoding="utf-8")  # noqa: SIM115 - closed by the stack
        stack.callback(handle.close)
        return handle

    def _stop_soon(self, name: str) -> None:
        """Stop ``name`` in the background: the caller hears of the failure at once."""
        held = self._sessions.pop(name, None)
        if held is not None:
            task = asyncio.get_running_loop().create_task(self._finish(held))
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    async def _stop(self, name: str) -> None:
        held = self._sessions.pop(name, None)
        if held is not None:
            await self._finish(held)

    async def _finish(self, held: _Session) -> None:
        if held.task is None:
            return
        held.stop.set()
        try:
            await asyncio.wait_for(asyncio.shield(held.task), 10)
        except BaseException:
            held.task.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(held.task, 5)

    async def _stop_all(self) -> None:
        for name in list(self._sessions):
            await self._stop(name)
        if self._background:
            await asyncio.wait(list(self._background), timeout=10)

    async def _reap_idle(self) -> None:
        while True:
            await asyncio.sleep(max(1.0, self.idle_s / 4))
            now = time.monotonic()
            for name, held in list(self._sessions.items()):
                if held.idle_for(now) > self.idle_s:
                    await self._stop(name)


def _why(exc: BaseException) -> str:
    """A short reason from an SDK or transport failure (groups unwrapped)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc) or type(exc).__name__
    if "Connection closed" in text or isinstance(exc, (EOFError, BrokenPipeError)):
        return "the server exited"
    return text
