"""One answer read back from the decode loop: token events in, ``Delta``s out.

The loop thread sends a submitted request's sampled tokens (and finally ``Finished``)
through its queue; this turns them into text, applying stop strings and the think
split, and ends with one delta carrying finish reason, usage, timings and the matched
stop sequence. Pure of llama.cpp: the token → bytes function is passed in.

Threads: runs on the thread that consumes the stream (one per request).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence

from desktop.engine._batching.slots import Finished, Reading, Request
from desktop.engine._prompting.stop_strings import TextAssembler
from desktop.engine._prompting.templates import ThinkSplitter
from desktop.engine._types import (
    Delta,
    FinishReason,
    Placement,
    Timings,
    TokenLogprob,
    Usage,
)


def read_answer(  # noqa: PLR0917 - one stream's parts
    request: Request,
    prompt_tokens: int,
    piece: Callable[[int], bytes],
    cancel: threading.Event,
    stops: Sequence[str],
    splitter: ThinkSplitter,
    *,
    started: float,
    placement: Placement | None = None,
) -> Iterator[Delta]:
    """Stream ``request``'s answer; closing the iterator early frees its slot next step.

    The final delta carries ``placement``: where the model that answered runs."""
    text = TextAssembler(stops)
    first_at: float | None = None
    received = 0
    logprobs: list[TokenLogprob] = []
    finished: Finished | None = None
    try:
        while True:
            event = request.events.get()
            if isinstance(event, Finished):
                finished = event
                break
            if isinstance(event, Reading):
                yield Delta(read=(event.done, event.total))
                continue
            received += 1
            if event.logprob is not None:
                logprobs.append(event.logprob)
            content, reasoning = splitter.feed(text.feed(piece(event.id)))
            if content or reasoning:
                if first_at is None:
                    first_at = time.perf_counter()
                yield Delta(text=content, reasoning=reasoning, logprobs=tuple(logprobs))
                logprobs = []
            if text.stopped or cancel.is_set():
                break
    finally:
        # Closing the iterator early (or a stop string) frees the slot next step.
        request.abandoned.set()
    if finished is not None and finished.error is not None:
        raise finished.error
    finish: FinishReason
    if cancel.is_set():
        finish = "cancelled"
    elif text.stopped or finished is None:
        finish = "stop"
    else:
        finish = finished.reason
    sampled = finished.sampled if finished is not None else received
    content, reasoning = splitter.feed(text.flush())
    tail_content, tail_reasoning = splitter.flush()
    end = time.perf_counter()
    first = first_at if first_at is not None else end
    yield Delta(
        text=content + tail_content,
        reasoning=reasoning + tail_reasoning,
        finish_reason=finish,
        usage=Usage(prompt_tokens, sampled, request.cached),
        timings=Timings(
            prompt_s=first - started,
            time_to_first_token_s=first - started,
            generation_s=end - first,
        ),
        logprobs=tuple(logprobs),
        stop_sequence=text.matched if finish == "stop" else None,
        placement=placement,
    )
