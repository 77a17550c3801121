"""The messages between the app and a model's worker, and how they are framed.

Each message is one MessagePack value (msgspec: typed, validated as it is decoded, no
code run by reading it, unlike pickle) behind a 4-byte little-endian length. Requests
carry an ``id`` the worker answers with: ``Item`` deltas of a stream, then ``Done`` (a
call's typed reply, or a stream's end) or ``Fault`` (the error it raised, rebuilt on the app's
side as the same ``EdgeDeskError`` class). The worker opens with ``Ready`` or ``Fault``
(id 0) for its model's load. ``Ping`` is the app's heartbeat: the worker's reading thread
answers it with ``Pong`` at once, whatever llama.cpp is doing on the other threads.

A frame is at most ``MAX_FRAME`` bytes. A header that claims more is refused before any
byte of the body is read (the stream is then broken: the worker ends), and a message
over the limit is never sent (its call fails with ``InvalidRequest``).

Threads: ``Channel.send`` may be called from any thread (one lock a channel);
``Channel.receive`` by one reading thread only.
"""

from __future__ import annotations

import contextlib
import os
import struct
import threading
from pathlib import Path
from typing import IO, Any

import msgspec

from desktop.base.errors import EdgeDeskError, InvalidRequest
from desktop.engine._types import (
    ChatCall,
    Delta,
    EngineStats,
    GenerationParams,
    LoadReport,
    LocalPlan,
    ModelKind,
)

_LENGTH = struct.Struct("<I")
# The largest message either side sends or reads. Above the largest legitimate one: the
# server's requests are under its body limit (8 MiB by default) and pictures go as their
# bytes; the largest answer, 2,048 embeddings of 4,096 floats, is about 75 MB. A header
# that claims more (1 GiB) is a broken or hostile stream: refused, not waited for.
MAX_FRAME = 256 << 20


class WireError(Exception):
    """The other side sent something that is not a message of this protocol.

    ``request_id`` is the id it carried where one could be read (a call of the right
    shape whose fields had the wrong types), so that call can be answered with a fault.
    """

    def __init__(self, message: str, request_id: int | None = None) -> None:
        super().__init__(message)
        self.request_id = request_id


# ---------------------------------------------------------------- app -> worker
class Open(msgspec.Struct, tag="open", array_like=True):
    """Load this model (the worker's first message): a ``ModelSpec`` with a local plan."""

    path: Path
    model_id: str
    kind: ModelKind
    context_length: int | None
    gpu_layers: int | None
    chat_template: str | None
    reasoning_format: str
    threads: int | None
    extra_files: tuple[Path, ...]
    plan: LocalPlan
    links_dir: Path | None
    prompt_cache_key: bytes | None


class StreamChat(msgspec.Struct, tag="chat", array_like=True):
    """``Engine.stream_chat``."""

    id: int
    call: ChatCall


class StreamCompletion(msgspec.Struct, tag="complete", array_like=True):
    """``Engine.stream_completion``."""

    id: int
    prompt: str
    params: GenerationParams


class StreamInfill(msgspec.Struct, tag="infill", array_like=True):
    """``Engine.stream_infill``."""

    id: int
    prefix: str
    suffix: str
    params: GenerationParams


class Embed(msgspec.Struct, tag="embed", array_like=True):
    """``Engine.embed`` (``counted``: ``embed_counted``)."""

    id: int
    texts: list[str | list[int]]  # texts or token ids
    counted: bool


class Rerank(msgspec.Struct, tag="rerank", array_like=True):
    """``Engine.rerank``."""

    id: int
    query: str
    documents: list[str]


class Tokenize(msgspec.Struct, tag="tokenize", array_like=True):
    """``Engine.tokenize``."""

    id: int
    text: str
    add_bos: bool
    special: bool


class Detokenize(msgspec.Struct, tag="detokenize", array_like=True):
    """``Engine.detokenize``."""

    id: int
    tokens: list[int]


class Render(msgspec.Struct, tag="render", array_like=True):
    """``Engine.render``."""

    id: int
    call: ChatCall


class CountChat(msgspec.Struct, tag="count_chat", array_like=True):
    """``LlamaEngine.count_chat_tokens``: a chat's prompt tokens, its pictures' included."""

    id: int
    call: ChatCall


class PromptTokens(msgspec.Struct, tag="prompt_tokens", array_like=True):
    """``Engine.prompt_tokens``."""

    id: int
    prompt: str


class Stats(msgspec.Struct, tag="stats", array_like=True):
    """``Engine.stats``."""

    id: int


class Forget(msgspec.Struct, tag="forget", array_like=True):
    """``LlamaEngine.forget_saved``: drop every kept conversation (no answer)."""


class Cancel(msgspec.Struct, tag="cancel", array_like=True):
    """Stop request ``id`` (its cancel event is set on the worker's side)."""

    id: int


class Close(msgspec.Struct, tag="close", array_like=True):
    """Free the model and exit (sent only when no request uses it)."""


class Ping(msgspec.Struct, tag="ping", array_like=True):
    """The app's heartbeat: answered with ``Pong(seq)`` by the worker's reading thread."""

    seq: int


Call = (
    StreamChat
    | StreamCompletion
    | StreamInfill
    | Embed
    | Rerank
    | Tokenize
    | Detokenize
    | Render
    | CountChat
    | PromptTokens
    | Stats
)
Request = Open | Call | Forget | Cancel | Close | Ping


# ---------------------------------------------------------------- worker -> app
class Ready(msgspec.Struct, tag="ready", array_like=True):
    """The model loaded: how, and how many streams it serves at once."""

    report: LoadReport
    parallel: int


class Item(msgspec.Struct, tag="item", array_like=True):
    """One delta of stream ``id``."""

    id: int
    delta: Delta


# A call's typed reply, one per kind of answer (decoded and checked as it arrives).
class Vectors(msgspec.Struct, tag="vectors", array_like=True):
    """``Embed``'s answer: normalised embeddings, and (``counted``) the prompt tokens."""

    vectors: list[list[float]]
    tokens: int | None = None


class Scores(msgspec.Struct, tag="scores", array_like=True):
    """``Rerank``'s answer: one relevance score a document."""

    scores: list[float]


class Tokens(msgspec.Struct, tag="tokens", array_like=True):
    """``Tokenize``'s and ``PromptTokens``' answer: token ids."""

    tokens: list[int]


class Text(msgspec.Struct, tag="text", array_like=True):
    """``Detokenize``'s and ``Render``'s answer."""

    text: str


class Count(msgspec.Struct, tag="count", array_like=True):
    """``CountChat``'s answer: a chat's prompt tokens."""

    count: int


class Counters(msgspec.Struct, tag="counters", array_like=True):
    """``Stats``' answer: the engine's counters."""

    stats: EngineStats


Value = Vectors | Scores | Tokens | Text | Count | Counters


class Done(msgspec.Struct, tag="done", array_like=True):
    """Request ``id`` finished: a call's typed reply (None for a stream's end)."""

    id: int
    value: Value | None = None


class Fault(msgspec.Struct, tag="fault", array_like=True):
    """Request ``id`` (0: the load) raised: the error's class name and what it carried."""

    id: int
    error: str  # the class name in desktop.base.errors; anything else: "Exception"
    message: str
    param: str | None = None
    kind: str | None = None
    params: dict[str, str] = {}
    numbers: dict[str, int] = {}  # ContextOverflow's and QueueFull's numbers
    answer: tuple[int, str, str] | None = None  # HTTP status, code and type it carried


class Pong(msgspec.Struct, tag="pong", array_like=True):
    """The worker is alive: the answer to ``Ping(seq)``."""

    seq: int


Reply = Ready | Item | Done | Fault | Pong


def _request_id(body: bytes) -> int | None:
    """The id of a call whose fields could not be read (``[tag, id, ...]``), if any."""
    try:
        raw = msgspec.msgpack.decode(body)
    except msgspec.DecodeError:
        return None
    if isinstance(raw, list) and len(raw) >= 2 and type(raw[1]) is int:
        return raw[1]
    return None


def _encode_hook(value: object) -> object:
    if isinstance(value, Path):
        # The file system's bytes, not text: a Linux file name need not be UTF-8.
        return os.fsencode(value)
    raise NotImplementedError(f"not a wire type: {type(value).__name__}")


def _decode_hook(kind: type, value: object) -> object:
    if kind is Path and isinstance(value, bytes):
        return Path(os.fsdecode(value))
    raise NotImplementedError(f"not a wire type: {kind.__name__}")


class Channel:
    """One direction-pair of framed messages over two byte streams (pipes)."""

    def __init__(self, reader: IO[bytes], writer: IO[bytes], incoming: Any) -> None:
        self._reader = reader
        self._writer = writer
        self._lock = threading.Lock()
        self._closed = False
        self._encoder = msgspec.msgpack.Encoder(enc_hook=_encode_hook)
        self._decoder: msgspec.msgpack.Decoder[Any] = msgspec.msgpack.Decoder(
            incoming, dec_hook=_decode_hook
        )

    def send(self, message: msgspec.Struct) -> None:
        """Write one message whole (raises OSError / BrokenPipeError when the peer is gone
        or the channel was closed)."""
        body = self._encoder.encode(message)
        if len(body) > MAX_FRAME:
            raise InvalidRequest(
                f"the message is {len(body)} bytes, over the {MAX_FRAME}-byte limit of what "
                "a model's worker takes at once; send less at a time"
            )
        with self._lock:
            if self._closed:
                raise BrokenPipeError("the worker's channel is closed")
            self._writer.write(_LENGTH.pack(len(body)) + body)
            self._writer.flush()

    def close(self) -> None:
        """Close both pipes (after the reading thread is done with them); sends fail after."""
        with self._lock:
            self._closed = True
            for stream in (self._writer, self._reader):
                with contextlib.suppress(OSError):  # a pipe the peer broke
                    stream.close()

    def receive(self) -> Any:
        """The next message, or None at a clean end of the stream (the peer is gone).

        Raises ``WireError`` for bytes that are no message; without a ``request_id`` (a
        header over ``MAX_FRAME``, refused before its body is read) nothing after it on
        the stream can be trusted."""
        head = self._read(_LENGTH.size)
        if head is None:
            return None
        (size,) = _LENGTH.unpack(head)
        if size > MAX_FRAME:
            raise WireError(
                f"a message header claims {size} bytes, over the {MAX_FRAME}-byte limit"
            )
        body = self._read(size)
        if body is None:
            return None
        try:
            return self._decoder.decode(body)
        except msgspec.DecodeError as exc:
            raise WireError(f"not a worker message: {exc}", _request_id(body)) from None

    def _read(self, size: int) -> bytes | None:
        data = bytearray()
        while len(data) < size:
            part = self._reader.read(size - len(data))
            if not part:
                return None
            data += part
        return bytes(data)


ERROR_NUMBERS = ("prompt_tokens", "n_ctx", "retry_after_s")  # what errors carry beside words


def text(value: str) -> str:
    """``value`` as UTF-8 can carry it: a lone surrogate (a Linux file name's byte that is
    not UTF-8, as Python decodes it) becomes its escape, ``bad\\xff``."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return value


def fault_of(request_id: int, exc: BaseException) -> Fault:
    """The wire form of an error raised by the worker's engine."""
    numbers: dict[str, int] = {}
    for name in ERROR_NUMBERS:
        value = getattr(exc, name, None)
        if isinstance(value, int):
            numbers[name] = value
    if isinstance(exc, EdgeDeskError):
        return Fault(
            request_id,
            type(exc).__name__,
            text(exc.message),
            exc.param,
            exc.kind,
            {key: text(value) for key, value in exc.params.items()},
            numbers,
            (exc.http_status, exc.code, exc.error_type),
        )
    return Fault(request_id, "Exception", text(f"{type(exc).__name__}: {exc}"))
