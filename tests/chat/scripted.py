"""A scripted engine for driving turns deterministically: each request gets the next
answer of its script, streamed word by word, and the prompts it was sent are kept.

Tool-call markup in a script is parsed as a local engine parses it (``gate_calls``), so
the consumer gets the calls structured, as from the real engine."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

from desktop.base.errors import Cancelled
from desktop.engine._prompting.toolcalls import gate_calls
from desktop.engine._types import ChatCall, Delta, GenerationParams, Message, Usage


class Scripted:
    """``stream_chat`` answering with ``answers`` in turn (the last one repeats)."""

    def __init__(self, *answers: str, wait: threading.Event | None = None) -> None:
        self.answers = list(answers)
        self.prompts: list[list[Message]] = []
        self.tools: list[list[dict[str, Any]] | None] = []
        self.params: list[GenerationParams] = []  # what each request asked of the engine
        self.calls: list[ChatCall] = []
        self._wait = wait  # set: the request "waits for a slot" until cancelled

    def stream_chat(
        self, model: str, call: ChatCall, cancel: threading.Event | None = None
    ) -> Iterator[Delta]:
        """Stream the next scripted answer (or wait to be cancelled, when told to)."""
        self.prompts.append(list(call.messages))
        self.params.append(call.params)
        self.tools.append(call.openai_tools())
        self.calls.append(call)
        answer = self.answers[min(len(self.prompts) - 1, len(self.answers) - 1)]
        return gate_calls(self._stream(answer, cancel), call)

    def _stream(self, answer: str, cancel: threading.Event | None) -> Iterator[Delta]:
        if self._wait is not None:
            assert cancel is not None
            self._wait.set()  # the test may now press Stop
            cancel.wait()
            raise Cancelled("stopped while waiting for the model")
        words = answer.split(" ")
        for i, word in enumerate(words):
            yield Delta(text=word if i == 0 else " " + word)
        yield Delta(finish_reason="stop", usage=Usage(5, len(words)))
