"""The worker process: one model loaded with ``load_engine``, served over two pipes.

Started by ``client.start_worker`` as ``python -m desktop.engine._worker``. Requests come
on standard input; answers go out on a private copy of standard output, whose own fd
then points at standard error (the worker's log file) so that nothing llama.cpp or a
library prints can corrupt a message. The worker ignores Ctrl-C (the app stops it with
``Close``) and exits as soon as its input ends: an app that died leaves no worker.

Threads: the main thread reads requests and only reads (and answers the app's
heartbeat, ``Ping``, at once: it never waits on llama.cpp, so a worker that stops
answering is stopped or stuck as a whole); the model loads on a thread of its own, and
each call runs on a thread of its own (the engine's methods are thread-safe), writing
its answers through the channel's lock.

Memory: until its ``Open`` comes the worker has imported only the wire (msgspec) and
the errors; the engine, llama_cpp and numpy are imported by the load. Neither Qt nor
the server is ever imported here, and what llama_cpp imports but the engine never uses
(``DEFERRED_MODULES``) runs only if something touches it (issue 47;
tests/engine/worker/test_worker_imports.py).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import logging
import os
import signal
import sys
import threading
import types
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, Any

from desktop.base.errors import Cancelled
from desktop.engine._worker import wire

if TYPE_CHECKING:
    from desktop.engine._llama import LlamaEngine

log = logging.getLogger("edgedesk.engine")
# Imported by llama_cpp's package (``llama_cache``: its ``LlamaDiskCache``) and never
# used by the engine, which keeps its own state cache: diskcache and the sqlite3 it
# imports were in every worker's memory. Each is a stand-in in ``sys.modules`` until
# something reads from it (``_Deferred``), so a use still works.
DEFERRED_MODULES = ("diskcache",)


def _private_output() -> IO[bytes]:
    """Standard output for messages alone: its fd copied, then fd 1 sent to the log."""
    out_fd = os.dup(sys.stdout.fileno())
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    return os.fdopen(out_fd, "wb", buffering=0)


def _quiet_signals() -> None:
    # Ctrl-C in the terminal reaches the whole process group: the app decides what
    # stops (it cancels requests and then closes us), not the keyboard.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class _Server:
    """Runs the calls of one connection on one engine."""

    def __init__(self, channel: wire.Channel, engine: LlamaEngine) -> None:
        self._channel = channel
        self._engine = engine
        self._cancels: dict[int, threading.Event] = {}
        self._lock = threading.Lock()

    def start(self, call: wire.Call) -> None:
        cancel = threading.Event()
        with self._lock:
            self._cancels[call.id] = cancel
        threading.Thread(
            target=self._run, args=(call, cancel), name=f"call-{call.id}", daemon=True
        ).start()

    def cancel(self, request_id: int) -> None:
        with self._lock:
            event = self._cancels.get(request_id)
        if event is not None:
            event.set()

    def _run(self, call: wire.Call, cancel: threading.Event) -> None:
        try:
            if isinstance(call, wire.StreamChat | wire.StreamCompletion | wire.StreamInfill):
                stream = self._stream(call, cancel)
                try:
                    for delta in stream:
                        self._channel.send(wire.Item(call.id, delta))
                finally:
                    stream.close()  # type: ignore[attr-defined]
                self._channel.send(wire.Done(call.id))
            else:
                self._channel.send(wire.Done(call.id, self._value(call, cancel)))
        except OSError:
            os._exit(0)  # the app is gone: nothing is left to answer
        except BaseException as exc:
            try:
                self._channel.send(wire.fault_of(call.id, exc))
            except OSError:
                os._exit(0)
        finally:
            with self._lock:
                self._cancels.pop(call.id, None)

    def _stream(self, call: wire.Call, cancel: threading.Event) -> Iterator[Any]:
        engine = self._engine
        if isinstance(call, wire.StreamChat):
            result: Iterator[Any] = engine.stream_chat(call.call, cancel)
        elif isinstance(call, wire.StreamCompletion):
            result = engine.stream_completion(call.prompt, call.params, cancel)
        else:
            assert isinstance(call, wire.StreamInfill)
            result = engine.stream_infill(call.prefix, call.suffix, call.params, cancel)
        return result

    def _value(self, call: wire.Call, cancel: threading.Event) -> wire.Value:  # noqa: PLR0911 - a case a call
        engine = self._engine
        match call:
            case wire.Embed(texts=texts, counted=True):
                return wire.Vectors(*engine.embed_counted(texts, cancel))
            case wire.Embed(texts=texts):
                return wire.Vectors(engine.embed(texts, cancel))
            case wire.Rerank(query=query, documents=documents):
                return wire.Scores(engine.rerank(query, documents, cancel))
            case wire.Tokenize(text=text, add_bos=add_bos, special=special):
                return wire.Tokens(engine.tokenize(text, add_bos=add_bos, special=special))
            case wire.Detokenize(tokens=tokens):
                return wire.Text(engine.detokenize(tokens))
            case wire.Render(call=chat):
                return wire.Text(engine.render(chat))
            case wire.CountChat(call=chat):
                return wire.Count(engine.count_chat_tokens(chat))
            case wire.PromptTokens(prompt=prompt):
                return wire.Tokens(engine.prompt_tokens(prompt))
            case wire.Stats():
                return wire.Counters(engine.stats())
        raise Cancelled(f"unknown call {type(call).__name__}")  # pragma: no cover


class _Deferred(types.ModuleType):
    """Stands in ``sys.modules`` for a module not run yet; the first attribute it lacks
    runs the real module (which then takes its place there) and is read from it.

    Not importlib's ``LazyLoader``: an ``import`` statement reads ``__spec__`` of a
    module already in ``sys.modules``, which runs a lazy module at once.
    """

    def __init__(self, name: str, spec: importlib.machinery.ModuleSpec) -> None:
        super().__init__(name)
        self.__spec__ = spec

    def __getattr__(self, attribute: str) -> Any:
        with _deferred_lock:
            if sys.modules.get(self.__name__) is self:
                del sys.modules[self.__name__]
            real = importlib.import_module(self.__name__)
            self.__dict__.update(real.__dict__)  # later reads no longer come here
        return getattr(real, attribute)


_deferred_lock = threading.Lock()


def defer_unused_imports(names: tuple[str, ...] = DEFERRED_MODULES) -> None:
    """Put a stand-in for each of ``names`` not yet imported in ``sys.modules``:
    importing it then costs nothing; the real module runs when it is first used."""
    for name in names:
        if name in sys.modules:
            continue
        spec = importlib.util.find_spec(name)
        if spec is None:
            continue  # not installed: whoever imports it gets the usual ImportError
        sys.modules[name] = _Deferred(name, spec)


def _load(channel: wire.Channel, request: wire.Open) -> Any:
    defer_unused_imports()  # before llama_cpp, which imports them
    from desktop.engine._loader import load_engine
    from desktop.engine._types import ModelSpec

    spec = ModelSpec(
        request.path,
        request.model_id,
        kind=request.kind,
        context_length=request.context_length,
        gpu_layers=request.gpu_layers,
        chat_template=request.chat_template,
        reasoning_format="think" if request.reasoning_format == "think" else "none",
        threads=request.threads,
        extra_files=request.extra_files,
        plan=request.plan,
    )
    try:
        engine = load_engine(
            spec, links_dir=request.links_dir, prompt_cache_key=request.prompt_cache_key
        )
    except BaseException as exc:
        channel.send(wire.fault_of(0, exc))
        return None
    channel.send(wire.Ready(engine.report, int(engine.parallel)))
    return engine


def _take(request: Any, server: _Server, engine: Any) -> None:
    """Act on one message of the app's other than ``Close`` and ``Ping``, on the reading
    thread."""
    if isinstance(request, wire.Cancel):
        server.cancel(request.id)
    elif isinstance(request, wire.Forget):
        engine.forget_saved()
    elif isinstance(request, wire.Open):
        log.error("worker: a second Open message; ignored")
    else:
        server.start(request)


BROKEN_STREAM = 3  # the exit code when the app's stream held something that is no message


def _start_load(channel: wire.Channel, request: wire.Open) -> tuple[threading.Event, list[Any]]:
    """Load on a thread of its own, so the reading thread answers pings meanwhile (a load
    takes seconds to minutes); the event is set once the engine is in the list. A load
    that fails (its ``Fault`` sent) ends the worker."""
    loaded = threading.Event()
    engine: list[Any] = []

    def load() -> None:
        result = _load(channel, request)
        if result is None:
            logging.shutdown()
            sys.stderr.flush()
            os._exit(0)
        engine.append(result)
        loaded.set()

    threading.Thread(target=load, name="load", daemon=True).start()
    return loaded, engine


def _receive(channel: wire.Channel) -> Any:
    """The app's next message (None: it is gone); a call the engine cannot take is
    answered with a fault here, and a broken stream ends the worker."""
    while True:
        try:
            return channel.receive()
        except wire.WireError as exc:
            if exc.request_id is None:
                # The stream itself is broken (a header claiming 1 GiB, bytes that are
                # no message): nothing after it can be trusted, and waiting for a body
                # that large would hang. The app sees the worker end, with this line.
                log.error("worker: error: %s; ending", exc)
                logging.shutdown()
                os._exit(BROKEN_STREAM)
            # One call the engine cannot take (a field of the wrong type): its caller
            # gets the error; the model and every other request go on.
            channel.send(wire.Fault(exc.request_id, "InvalidRequest", str(exc)))


def serve(reader: IO[bytes], writer: IO[bytes]) -> int:
    """Load the model the first message names, then answer until ``Close`` or the end."""
    channel = wire.Channel(reader, writer, wire.Request)
    try:
        first = channel.receive()
    except wire.WireError as exc:
        log.error("worker: error: %s; ending", exc)
        return BROKEN_STREAM
    if not isinstance(first, wire.Open):
        return 2
    loaded, engines = _start_load(channel, first)
    server: _Server | None = None
    while True:
        request = _receive(channel)
        if request is None:
            break  # the app is gone (or closed us without a word): leave at once
        if isinstance(request, wire.Ping):
            try:
                channel.send(wire.Pong(request.seq))  # answered here, never by llama.cpp
            except OSError:
                break  # the app is gone
            continue
        loaded.wait()  # the app sends nothing else before the model is ready
        engine = engines[0]
        if isinstance(request, wire.Close):
            engine.close()
            return 0
        if server is None:
            server = _Server(channel, engine)
        try:
            _take(request, server, engine)
        except OSError:
            break  # the app is gone
    # Nothing is waiting for answers: skip freeing llama.cpp's memory one object at a
    # time (the OS takes it back whole) and any thread still decoding.
    os._exit(0)


def main() -> int:
    """The worker's entry point (``python -m desktop.engine._worker``)."""
    _quiet_signals()
    logging.basicConfig(
        stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(name)s: %(message)s"
    )
    writer = _private_output()
    return serve(sys.stdin.buffer, writer)
