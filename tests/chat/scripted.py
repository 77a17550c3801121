"""A scripted engine for driving turns deterministically: each request gets the next
answer of its script, streamed word by word, and the prompts it was sent are kept."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from desktop.engine.types import Chunk, GenerationParams, Message, Usage
from desktop.errors import Cancelled


class Scripted:
    """``stream_chat`` answering with ``answers`` in turn (the last one repeats)."""

    def __init__(self, *answers: str, wait: threading.Event | None = None) -> None:
        self.answers = list(answers)
        self.prompts: list[list[Message]] = []
        self.tools: list[list[dict[str, Any]] | None] = []
        self.params: list[GenerationParams] = []  # what each request asked of the engine
        self._wait = wait  # set: the request "waits for a slot" until cancelled

    def stream_chat(
        self,
        model: str,
        messages: Sequence[Message],
        params: GenerationParams,
        cancel: threading.Event | None = None,
        tools: Sequence[dict[str, Any]] | None = None,
        *,
        template_kwargs: Mapping[str, Any] | None = None,
    ) -> Iterator[Chunk]:
        """Stream the next scripted answer (or wait to be cancelled, when told to)."""
        self.prompts.append(list(messages))
        self.params.append(params)
        self.tools.append(list(tools) if tools is not None else None)
        answer = self.answers[min(len(self.prompts) - 1, len(self.answers) - 1)]
        return self._stream(answer, cancel)

    def _stream(self, answer: str, cancel: threading.Event | None) -> Iterator[Chunk]:
        if self._wait is not None:
            assert cancel is not None
            self._wait.set()  # the test may now press Stop
            cancel.wait()
            raise Cancelled("stopped while waiting for the model")
        words = answer.split(" ")
        for i, word in enumerate(words):
            yield Chunk(text=word if i == 0 else " " + word)
        yield Chunk(finish_reason="stop", usage=Usage(5, len(words)))
