"""Pure translations between our engine values and a remote's OpenAI wire format.

Requests go out as JSON objects built here (``dict[str, object]``: written, never read
back); what the remote sends is read defensively (``Mapping[str, Any]``: untrusted JSON,
each field checked where it is used).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from desktop.base.errors import RemoteError
from desktop.engine import (
    MEDIA_MARKER,
    ChatCall,
    FinishReason,
    GenerationParams,
    Image,
    Message,
    ToolCall,
    Usage,
    new_call_id,
)

_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "eos": "stop",
}


def message_dict(message: Message) -> dict[str, object]:
    """One conversation turn as OpenAI's chat API takes it."""
    out: dict[str, object] = {"role": message.role, "content": message.content}
    if message.images:
        # The remote model takes the pictures or its server refuses them: never dropped.
        out["content"] = content_parts(message)
    if message.name:
        out["name"] = message.name
    if message.tool_call_id:
        out["tool_call_id"] = message.tool_call_id
    if message.tool_calls:
        out["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in message.tool_calls
        ]
    return out


def content_parts(message: Message) -> list[dict[str, object]]:
    """A message with pictures as OpenAI content parts: each picture a data URL where its
    MEDIA_MARKER stands in the text, or all of them before the text when it has none."""

    def picture(image: Image) -> dict[str, object]:
        data = base64.b64encode(image.data).decode("ascii")
        return {"type": "image_url", "image_url": {"url": f"data:{image.mime};base64,{data}"}}

    pieces = message.content.split(MEDIA_MARKER)
    if len(pieces) != len(message.images) + 1:
        pieces = ["", message.content.replace(MEDIA_MARKER, "")]
        pieces[1:1] = [""] * (len(message.images) - 1)
    parts: list[dict[str, object]] = [{"type": "text", "text": pieces[0]}] if pieces[0] else []
    for image, text in zip(message.images, pieces[1:], strict=True):
        parts.append(picture(image))
        if text:
            parts.append({"type": "text", "text": text})
    return parts


def sampling(params: GenerationParams) -> dict[str, object]:
    """The sampling fields every OpenAI-compatible server understands (others left out)."""
    out: dict[str, object] = {"temperature": params.temperature, "top_p": params.top_p}
    if params.max_tokens is not None:
        out["max_tokens"] = params.max_tokens
    if params.stop:
        out["stop"] = list(params.stop)
    if params.seed is not None:
        out["seed"] = params.seed
    if params.presence_penalty:
        out["presence_penalty"] = params.presence_penalty
    if params.frequency_penalty:
        out["frequency_penalty"] = params.frequency_penalty
    if params.json_schema:
        out["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "answer", "schema": json.loads(params.json_schema)},
        }
    return out


def chat_body(model: str, call: ChatCall) -> dict[str, object]:
    """A streamed chat-completions request (the remote applies its own template)."""
    body: dict[str, object] = {
        "model": model,
        "messages": [message_dict(m) for m in call.messages],
        "stream": True,
        "stream_options": {"include_usage": True},
        **sampling(call.params),
    }
    tools = call.openai_tools()
    if tools:
        body["tools"] = tools
    if call.template_kwargs:
        body["chat_template_kwargs"] = dict(call.template_kwargs)
    return body


def completion_body(
    model: str, prompt: str, params: GenerationParams, suffix: str | None = None
) -> dict[str, object]:
    """A streamed text-completions request (``suffix``: fill-in-the-middle)."""
    body: dict[str, object] = {
        "model": model,
        "prompt": prompt,
        "stream": True,
        "stream_options": {"include_usage": True},
        **sampling(params),
    }
    if suffix is not None:
        body["suffix"] = suffix
    return body


# Any: untrusted JSON from the remote, each field checked where it is read.
def sse_payloads(lines: Iterable[str], remote: str = "the remote") -> Iterator[dict[str, Any]]:
    """The JSON objects of an SSE stream's ``data:`` lines, up to ``[DONE]``.

    An error the remote reports mid-answer raises: as OpenAI and vLLM send it (a
    ``data:`` event holding ``error``) or as llama-server has (an ``error:`` line).
    """
    for line in lines:
        if line.startswith("error:"):
            raise _failed(remote, _json_or(line[6:].strip()))
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            return
        try:
            payload = json.loads(data)
        except ValueError:
            raise RemoteError(f"{remote} sent a malformed event: {data[:80]!r}") from None
        if isinstance(payload, dict) and "error" in payload:
            raise _failed(remote, payload)
        if isinstance(payload, dict):
            yield payload


def _json_or(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _failed(remote: str, body: Any) -> RemoteError:
    return RemoteError(f"{remote} failed mid-answer: {error_message(body)}")


def usage_of(payload: Mapping[str, Any]) -> Usage | None:
    """Token counts from a payload's ``usage`` object, if it has one."""
    raw = payload.get("usage")
    if not isinstance(raw, dict):
        return None
    details = raw.get("prompt_tokens_details") or {}
    return Usage(
        int(raw.get("prompt_tokens") or 0),
        int(raw.get("completion_tokens") or 0),
        int(details.get("cached_tokens") or 0) if isinstance(details, dict) else 0,
    )


def delta_of(payload: Mapping[str, Any], *, chat: bool) -> tuple[str, str, FinishReason | None]:
    """(text, reasoning, finish reason) of one streamed event's first choice."""
    choices = payload.get("choices") or []
    if not choices or not isinstance(choices[0], dict):
        return "", "", None
    choice = choices[0]
    finish = _FINISH.get(str(choice.get("finish_reason")))
    if not chat:
        return str(choice.get("text") or ""), "", finish
    delta = choice.get("delta") or {}
    reasoning = delta.get("reasoning_content") or delta.get("reasoning") or ""
    return str(delta.get("content") or ""), str(reasoning), finish


def error_message(body: Any) -> str:
    """The human part of an OpenAI (or FastAPI, or plain) error body."""
    if isinstance(body, dict):
        err = body.get("error", body.get("detail", body))
        if isinstance(err, dict):
            return str(err.get("message") or err)
        return str(err)
    return str(body)[:300]


def status_error(
    status: int, body: Any, remote: str, retry_after: str | None = None
) -> RemoteError:
    """A remote's HTTP error as the message and status our API answers with."""
    detail = error_message(body)
    if status in (401, 403):
        return RemoteError(
            f"remote '{remote}' refused the API key ({status}: {detail}); store the right "
            f"one with 'edgedesk remotes add {remote} URL --api-key-stdin'",
            status=502,
            code="remote_auth_failed",
        )
    if status == 429:
        wait = f"; retry after {retry_after} s" if retry_after else "; retry shortly"
        return RemoteError(
            f"remote '{remote}' is rate-limiting us ({detail}){wait}",
            status=429,
            code="remote_rate_limited",
        )
    if status == 404:
        return RemoteError(
            f"remote '{remote}' does not know that model or route ({detail})",
            status=404,
            code="remote_not_found",
        )
    if 400 <= status < 500:
        return RemoteError(
            f"remote '{remote}' rejected the request ({status}: {detail})",
            status=400,
            code="remote_invalid_request",
        )
    return RemoteError(f"remote '{remote}' failed ({status}: {detail})")


def tool_call_pieces(payload: Mapping[str, Any]) -> list[tuple[int, str, str, str]]:
    """(index, id, name piece, arguments piece) of the tool-call deltas in one chat event."""
    choices = payload.get("choices") or []
    if not choices or not isinstance(choices[0], dict):
        return []
    delta = choices[0].get("delta") or {}
    pieces = []
    for call in delta.get("tool_calls") or []:
        function = call.get("function") or {}
        pieces.append(
            (
                int(call.get("index") or 0),
                str(call.get("id") or ""),
                str(function.get("name") or ""),
                str(function.get("arguments") or ""),
            )
        )
    return pieces


def tool_calls_of(calls: Mapping[int, tuple[str, str, str]]) -> tuple[ToolCall, ...]:
    """The remote's structured calls (index -> id, name, arguments), in index order.

    Passed on as the remote sent them, never written out as markup to be parsed again:
    the arguments text is the remote's (the client judges it); a call the remote sent
    without an id gets a fresh one.
    """
    return tuple(
        ToolCall(call_id or new_call_id(), name, arguments if arguments.strip() else "{}")
        for _, (call_id, name, arguments) in sorted(calls.items())
    )
