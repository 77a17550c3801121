"""The worker's messages: what crosses the pipe arrives as it left, errors keep their
class and numbers, and bytes that are no message are refused, not run."""

from __future__ import annotations

import io
import os
import struct
from pathlib import Path

import pytest

from desktop.base.errors import ContextOverflow, QueueFull, RemoteError, VisionUnsupported
from desktop.engine._types import (
    ChatCall,
    Delta,
    EngineStats,
    GenerationParams,
    Image,
    LoadReport,
    Message,
    Placement,
    ToolCall,
    ToolSpec,
    Usage,
)
from desktop.engine._worker import wire
from desktop.engine._worker.endings import error_of, how_it_ended

pytestmark = pytest.mark.fast


def _through(message: object, kind: object) -> object:
    """``message`` written to a buffer by one channel and read back by another."""
    buffer = io.BytesIO()
    wire.Channel(io.BytesIO(), buffer, kind).send(message)  # type: ignore[arg-type]
    buffer.seek(0)
    return wire.Channel(buffer, io.BytesIO(), kind).receive()


def test_a_chat_call_arrives_whole_pictures_and_tool_calls_included() -> None:
    picture = Image(b"\x89PNG\r\n\x1a\n\x00", "image/png", "ab" * 32, checked=True)
    call = wire.StreamChat(
        7,
        ChatCall.of(
            [
                Message("system", "be brief"),
                Message("user", "what is this? <__media__>", images=(picture,)),
                Message("assistant", "", tool_calls=(ToolCall("c1", "look", '{"x": 1}'),)),
                Message("tool", "a cat", tool_call_id="c1"),
            ],
            GenerationParams(
                max_tokens=None, stop=("\n\n",), seed=3, json_schema='{"type":"object"}'
            ),
            [ToolSpec("look", "looks", {"type": "object", "properties": {}}, strict=True)],
            {"enable_thinking": False},
            forced=True,
        ),
    )
    assert _through(call, wire.Request) == call


def test_a_delta_and_a_load_report_arrive_whole() -> None:
    delta = Delta(
        "hé",
        tool_calls=(ToolCall("call_1", "look", "{}"),),
        finish_reason="stop",
        usage=Usage(12, 3, 8),
        placement=Placement(19, 19, ("CUDA0 (H200)",)),
        stop_sequence="</s>",
    )
    assert _through(wire.Item(3, delta), wire.Reply) == wire.Item(3, delta)
    report = LoadReport("m", Path("/models/m.gguf"), 4096, 0, False, 0.5, 1 << 30, "gguf")
    ready = wire.Ready(report, 4)
    assert _through(ready, wire.Reply) == ready


def test_a_path_that_is_not_utf8_crosses_as_the_file_systems_bytes() -> None:
    odd = Path(os.fsdecode(b"/models/bad\xff.gguf"))
    report = LoadReport("m", odd, 512, 0, False, 0.1, 0, "gguf")
    arrived = _through(wire.Ready(report, 1), wire.Reply)
    assert isinstance(arrived, wire.Ready) and arrived.report.path == odd
    assert wire.text("bad\udcff") == "bad\\xff"
    assert wire.text("plain") == "plain"


@pytest.mark.parametrize(
    "error",
    [
        ContextOverflow("too long", prompt_tokens=900, n_ctx=512, param="messages"),
        QueueFull("busy", retry_after_s=4),
        RemoteError("gpu-01: 401", status=401, code="remote_auth_failed"),
        VisionUnsupported("tiny"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_an_error_keeps_its_class_message_and_numbers(error: Exception) -> None:
    fault = _through(wire.fault_of(5, error), wire.Reply)
    assert isinstance(fault, wire.Fault)
    again = error_of(fault)
    assert type(again) is type(error)
    assert str(again) == str(error)
    for name in (
        "prompt_tokens",
        "n_ctx",
        "retry_after_s",
        "http_status",
        "param",
        "kind",
        "model",
    ):
        assert getattr(again, name, None) == getattr(error, name, None), name


def test_a_bug_in_the_worker_is_an_error_here_with_its_type_named() -> None:
    fault = wire.fault_of(1, ZeroDivisionError("division by zero"))
    again = error_of(fault)
    assert isinstance(again, RuntimeError)
    assert str(again) == "ZeroDivisionError: division by zero"


def test_bytes_that_are_no_message_are_refused() -> None:
    body = b"\x93\xa3rm!\x01"  # MessagePack, but no message of this protocol
    reader = io.BytesIO(struct.pack("<I", len(body)) + body)
    with pytest.raises(wire.WireError):
        wire.Channel(reader, io.BytesIO(), wire.Request).receive()
    huge = io.BytesIO(struct.pack("<I", wire.MAX_FRAME + 1))
    with pytest.raises(wire.WireError, match="over the"):
        wire.Channel(huge, io.BytesIO(), wire.Request).receive()


@pytest.mark.parametrize(
    "value",
    [
        wire.Vectors([[0.6, 0.8], [1.0, 0.0]]),
        wire.Vectors([[0.6, 0.8]], 5),
        wire.Scores([0.25, -3.5]),
        wire.Tokens([1, 2, 3]),
        wire.Text("héllo"),
        wire.Count(42),
        wire.Counters(EngineStats(slots_total=4, slots_busy=1)),
    ],
    ids=lambda value: type(value).__name__,
)
def test_each_calls_typed_reply_arrives_whole(value: wire.Value) -> None:
    assert _through(wire.Done(9, value), wire.Reply) == wire.Done(9, value)


def test_a_reply_that_is_not_a_typed_value_is_refused_as_it_is_read() -> None:
    # Before replies were typed, a bare list crossed and was converted by each call.
    with pytest.raises(wire.WireError):
        _through(wire.Done(9, [1, 2, 3]), wire.Reply)  # type: ignore[arg-type]


def test_the_end_of_the_pipe_is_none_even_mid_message() -> None:
    assert wire.Channel(io.BytesIO(b""), io.BytesIO(), wire.Request).receive() is None
    cut = io.BytesIO(struct.pack("<I", 10) + b"abc")
    assert wire.Channel(cut, io.BytesIO(), wire.Request).receive() is None


def test_how_a_worker_ended_in_words() -> None:
    assert how_it_ended(-6) == "aborted (SIGABRT)"
    assert how_it_ended(-9) == "killed (SIGKILL)"
    assert how_it_ended(-11) == "crashed (SIGSEGV)"
    assert how_it_ended(3) == "exit code 3"
    assert how_it_ended(None) == "stopped answering"


def test_a_heartbeat_crosses_both_ways() -> None:
    assert _through(wire.Ping(7), wire.Request) == wire.Ping(7)
    assert _through(wire.Pong(7), wire.Reply) == wire.Pong(7)


def test_a_message_over_the_frame_limit_is_refused_before_a_byte_is_sent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from desktop.base.errors import InvalidRequest

    monkeypatch.setattr(wire, "MAX_FRAME", 64)
    out = io.BytesIO()
    with pytest.raises(InvalidRequest, match="over the 64-byte limit"):
        wire.Channel(io.BytesIO(), out, wire.Request).send(wire.Tokenize(1, "x" * 100, True, True))
    assert out.getvalue() == b""  # the stream stays whole: the next message reads


def test_a_header_claiming_1_gib_is_refused_without_waiting_for_its_body() -> None:
    # Nothing follows the header: a reader that trusted it would wait for a gigabyte.
    claimed = io.BytesIO(struct.pack("<I", 1 << 30))
    with pytest.raises(wire.WireError, match="claims 1073741824 bytes") as refused:
        wire.Channel(claimed, io.BytesIO(), wire.Request).receive()
    assert refused.value.request_id is None  # the stream is broken, not one call
