"""The one generation pipeline: how every protocol's route runs a model and answers.

A route checks and translates its request into an engine call, then hands that call and
its protocol's ``AnswerWire`` to ``generate`` (Anthropic and Responses, whose requests
may name MCP servers EdgeDesk runs itself, go through ``generate_chat``, which picks
``generate`` or ``generate_hosted``). The pipeline does the rest, the same way for all
four protocols:

- streamed: the engine's chunks become ``answer.Piece``/``Ending`` items, the wire turns
  them into bytes on the stream's own thread (``streaming.Pump``); the HTTP status,
  headers and the wire's opening event go out with the first item, which is the
  engine's ``ADMITTED`` (before the prompt is read) or else its first chunk. So an
  error raised before it (queue full, unknown model, a failed load, context overflow,
  an image refused) still answers with its own HTTP status; an error after it ends the
  stream with the wire's own error event (``guarded``);
- whole: the answer is drained on a worker thread and the wire makes the body there;
- either way the request's cancel event is set when the client goes away, and the
  scheduler's lease is released when the answer ends or is abandoned.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import Any, Protocol

import anyio

from desktop.base.errors import EdgeDeskError
from desktop.chat import ToolStep
from desktop.engine import ChatCall, Delta
from desktop.server._answer import Ending, Piece, WholeAnswer, answer_pieces, drain
from desktop.server._deps import Call
from desktop.server._mcp.hosted import Collected, Counted, Event, Hosted, collect, run
from desktop.server._pump import (
    Keepalive,
    TimedStream,
    close_stream,
    start_stream,
    watch_disconnect,
)
from desktop.server._services import RequestInfo
from desktop.server._token_count import user_texts
from desktop.tools import ToolSet

log = logging.getLogger("edgedesk.server")
MAX_LOGGED_ERROR = 300  # characters of a mid-stream error kept in the access log
SSE = "text/event-stream"


class AnswerWire(Protocol):
    """One protocol's side of one answer: its events when streamed, its body when whole.

    Built per request by the route; the pipeline calls either the streaming methods
    (``opening``, ``piece``…, ``ending``, on the stream's thread) or ``whole`` (on a
    worker thread), then ``finished``.
    """

    media_type: str  # of a streamed answer

    @property
    def keepalive(self) -> Keepalive:
        """Sent when a streamed answer that began has been quiet for
        streaming.KEEPALIVE_S (its prompt still being read); b"": nothing (a protocol
        with no such event); a callable: made then, on the event loop."""

    def opening(self) -> bytes:
        """What goes out with the first item (may be empty)."""
        ...

    def piece(self, piece: Piece) -> bytes:
        """The events of one chunk's words (empty when it adds nothing)."""
        ...

    def ending(self, ending: Ending) -> bytes:
        """The events that close the answer (anything that must exist before the client
        reads them, such as a stored response, is done here)."""
        ...

    def error_event(self, error: EdgeDeskError) -> bytes:
        """The protocol's own error event, for a failure after the stream began."""
        ...

    def whole(self, answer: WholeAnswer) -> Any:
        """The response body of an answer that was not streamed."""
        ...

    def finished(self) -> None:
        """Runs once the answer is out (Ollama's ``keep_alive: 0`` unloads here)."""
        ...


class HostedWire(AnswerWire, Protocol):
    """An ``AnswerWire`` that also says the rounds of a tool loop EdgeDesk ran."""

    def listed(self, tools: ToolSet) -> bytes:
        """The events saying which tools the request's MCP servers offered."""
        ...

    def step(self, step: ToolStep, tools: ToolSet, first: int) -> bytes:
        """The events of one finished round of calls (its words already went out);
        ``first`` numbers its first call among all the answer's calls."""
        ...

    def whole_hosted(self, answer: Collected) -> Any:
        """The response body of a whole tool-loop answer."""
        ...


def stream_failure(exc: Exception) -> EdgeDeskError:
    """The error a stream that broke mid-way reports (a bug is logged, not shown)."""
    if isinstance(exc, EdgeDeskError):
        return exc
    log.error("a stream failed mid-way", exc_info=exc)
    return EdgeDeskError(f"internal error ({type(exc).__name__}); see the server log")


def guarded(
    events: Iterator[bytes], failed: Callable[[EdgeDeskError], bytes], *, info: RequestInfo
) -> Generator[bytes, None, None]:
    """``events``; an error after bytes went out ends the stream with ``failed(error)``.

    Once a stream has begun its HTTP status is sent, so an engine that fails mid-answer
    (a remote that drops the connection, times out or reports an error; a local engine
    fault) can only be told in the stream, in the protocol's own error event, after the
    tokens already sent. Before the first bytes the error is raised, so the route still
    answers with the error's own status. A failure after the first bytes is recorded in
    ``info.error``, so the access log tells it apart from an answer that completed.
    Closing this closes ``events`` (and so frees the scheduler's gate) at once.
    """
    started = False
    try:
        for out in events:
            started = True
            yield out
    except Exception as exc:
        if not started:
            raise
        error = stream_failure(exc)
        info.error = error.message[:MAX_LOGGED_ERROR]
        info.error_code, info.error_type = error.code, error.error_type
        yield failed(error)
    finally:
        close_stream(events)


def answer_stream(items: Iterable[Piece | Ending], wire: AnswerWire) -> Iterator[bytes]:
    """A streamed answer's bytes: the opening with the first item, the pieces, the ending.

    The opening waits for the first item (the engine's ``ADMITTED``, else its first
    chunk): until then an error keeps its status. It is yielded even when empty (a text
    completion's), so the response and its headers go out then.
    """
    opened = False
    for item in items:
        out = b""
        first = not opened
        if first:
            opened = True
            out = wire.opening()
        out += wire.ending(item) if isinstance(item, Ending) else wire.piece(item)
        if out or first:
            yield out
    wire.finished()


def hosted_stream(loop: Iterable[Event], wire: HostedWire) -> Iterator[bytes]:
    """A streamed tool-loop answer: the opening and the tools listed, each reply's words,
    each round's calls, the ending."""
    tools = ToolSet()
    made = 0  # calls said so far: numbers the next round's
    for event in loop:
        if isinstance(event, ToolSet):
            tools = event
            out = wire.opening() + wire.listed(tools)
        elif isinstance(event, ToolStep):
            out = wire.step(event, tools, made)
            made += len(event.calls)
        elif event.is_final:
            out = wire.ending(Ending((), event))
        else:
            out = wire.piece(Piece(event.text, event.reasoning))
        if out:
            yield out
    wire.finished()


async def _respond(
    call: Call,
    wire: AnswerWire,
    streamed: bool,
    events: Callable[[], Iterator[bytes]],
    body: Callable[[], Any],
) -> Any:
    """Stream ``events()`` (guarded, opened with the first bytes), or make ``body()`` on a
    worker thread; either way the client leaving sets ``call.cancel``."""
    if streamed:
        return await start_stream(
            call.request,
            guarded(events(), wire.error_event, info=call.info),
            call.cancel,
            media_type=wire.media_type,
            keepalive=wire.keepalive,
        )

    def whole() -> Any:
        result = body()
        wire.finished()
        return result

    return await watch_disconnect(
        call.request, call.cancel, lambda: anyio.to_thread.run_sync(whole)
    )


async def generate(
    call: Call,
    stream: Iterator[Delta],
    wire: AnswerWire,
    *,
    streamed: bool,
) -> Any:
    """Run ``stream`` (an engine call made with ``call.cancel``) and answer in ``wire``'s
    protocol: its event stream when ``streamed``, else its whole body. The engine held
    back any tool-call markup and hands the calls over parsed (``Delta.tool_calls``).
    """
    chunks = TimedStream(stream, call.info)
    return await _respond(
        call,
        wire,
        streamed,
        lambda: answer_stream(answer_pieces(chunks), wire),
        lambda: wire.whole(drain(chunks)),
    )


async def generate_hosted(
    call: Call,
    hosting: Hosted,
    wire: HostedWire,
    *,
    streamed: bool,
    model: str,
    chat: ChatCall,
) -> Any:
    """Run the request's MCP tool loop (``mcp.hosted.run``) and answer in ``wire``'s
    protocol, streamed or whole, with the same cancel, guard and bookkeeping as
    ``generate``; each reply of the model is counted in the access log."""
    counted = Counted(call.services.scheduler, lambda s: TimedStream(s, call.info))
    loop = run(counted, hosting.toolbox, model, chat, cancel=call.cancel)
    return await _respond(
        call,
        wire,
        streamed,
        lambda: hosted_stream(loop, wire),
        lambda: wire.whole_hosted(collect(loop)),
    )


async def generate_chat(
    call: Call,
    wire: HostedWire,
    hosting: Hosted | None,
    *,
    streamed: bool,
    model: str,
    chat: ChatCall,
) -> Any:
    """A chat answer for a protocol whose requests may name MCP servers (Anthropic,
    Responses): with ``hosting``, the tool loop over those servers, else the model's."""
    await call.refuse_over_context(model, user_texts(chat), chat.params.context_length)
    if hosting is not None:
        return await generate_hosted(call, hosting, wire, streamed=streamed, model=model, chat=chat)
    stream = call.services.scheduler.stream_chat(model, chat, call.cancel)
    return await generate(call, stream, wire, streamed=streamed)
