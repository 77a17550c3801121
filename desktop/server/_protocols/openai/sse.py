"""Server-sent events of one streamed answer, with the common event pre-encoded.

Nearly every event of a stream is a plain text delta that differs from the previous one
only in its text. Building a dict and ``json.dumps``-ing it per token cost ~0.3-0.8 ms
of Python per event, which is a tenth of a token's time on a small model. So each
stream serialises its text-delta event once, with a marker where the text goes, and
per token only JSON-escapes the text and splices it in. The result is byte-for-byte what
the dict path produces (``tests/server/protocols/openai/test_sse.py`` checks that); rarer events
(reasoning, logprobs, tool calls, finish, usage) still go through the dicts in
``events.py``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TypedDict

from desktop.engine import TokenLogprob, Usage
from desktop.server._protocols.openai import events as openai
from desktop.server._protocols.openai import schemas

_MARKER = "\x00edgedesk-text\x00"  # cannot occur in the escaped JSON of a real field
# For a str, JSONEncoder.encode goes straight to the C string escaper: no dict walk.
_escape = json.JSONEncoder(ensure_ascii=False).encode


class _Ids(TypedDict):
    """What every event of one stream names: the request, the model, when it began."""

    request_id: str
    model: str
    created: int


def _template(body: dict[str, object]) -> tuple[bytes, bytes] | None:
    """The SSE event of ``body`` split around the marker; None if it is not there once."""
    event = openai.sse(body)
    parts = event.split(_escape(_MARKER).encode("utf-8"))
    return (parts[0], parts[1]) if len(parts) == 2 else None


def _splice(template: tuple[bytes, bytes], text: str) -> bytes:
    return template[0] + _escape(text).encode("utf-8") + template[1]


class ChatEvents:
    """The ``chat.completion.chunk`` events of one streamed chat answer."""

    def __init__(self, *, request_id: str, model: str, created: int, include_usage: bool) -> None:
        self._ids: _Ids = {"request_id": request_id, "model": model, "created": created}
        self._include_usage = include_usage
        self._content = _template(self._body({"content": _MARKER}))

    def _body(
        self,
        delta: openai.ChatDelta,
        finish: str | None = None,
        logprobs: Sequence[TokenLogprob] | None = None,
    ) -> dict[str, object]:
        return openai.chat_delta(
            **self._ids,
            delta=delta,
            finish=finish,
            with_usage_field=self._include_usage,
            logprobs=logprobs,
        )

    def content(self, text: str) -> bytes:
        """A plain text delta (the event of almost every token)."""
        if self._content is None:  # the marker clashed with an id: use the general path
            return self.event({"content": text})
        return _splice(self._content, text)

    def event(
        self,
        delta: openai.ChatDelta,
        finish: str | None = None,
        logprobs: Sequence[TokenLogprob] | None = None,
    ) -> bytes:
        """Any delta, finish reason or logprobs (built as a dict)."""
        return openai.sse(self._body(delta, finish, logprobs))

    def usage(self, usage: Usage | None) -> bytes:
        """The last event when ``include_usage`` was asked: no choices, the token counts."""
        return openai.sse(openai.chat_delta(**self._ids, delta={}, usage=openai.usage_out(usage)))


class CompletionEvents:
    """The ``text_completion`` events of one streamed (legacy) completion."""

    def __init__(self, *, request_id: str, model: str, created: int) -> None:
        self._ids: _Ids = {"request_id": request_id, "model": model, "created": created}
        self._text = _template(openai.completion_delta(**self._ids, text=_MARKER))

    def text(self, text: str) -> bytes:
        """A plain text piece (the event of almost every token)."""
        if self._text is None:
            return self.event(text)
        return _splice(self._text, text)

    def event(
        self,
        text: str,
        finish: str | None = None,
        logprobs: schemas.CompletionLogprobs | None = None,
    ) -> bytes:
        """Any piece, finish reason or logprobs (built as a dict)."""
        return openai.sse(
            openai.completion_delta(**self._ids, text=text, finish=finish, logprobs=logprobs)
        )

    def usage(self, usage: Usage | None) -> bytes:
        """The last event when ``include_usage`` was asked."""
        return openai.sse(
            openai.completion_delta(**self._ids, text="", usage=openai.usage_out(usage))
        )
