"""Answer from documents: numbered sources in the prompt, ``[n]`` citations mapped back.

The model sees each retrieved chunk as ``[n] file, page, lines`` followed by its text,
and is asked to cite with ``[n]``. ``citations`` turns the numbers in its answer back
into the file, page and line range a viewer can open; numbers that name no source are
dropped rather than shown as a broken link.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from desktop.engine import Message
from desktop.retrieval._search import Hit, Searcher
from desktop.store import Source, place

SYSTEM_PROMPT = (
    "Answer the question using only the numbered sources below. After each claim, cite "
    "the source it comes from as [n]. If the sources do not contain the answer, say so. "
    "Answer in the language of the question."
)
_CITATION = re.compile(r"\[(\d+(?:\s*[,，]\s*\d+)*)\]")


# A ``[n]`` in an answer and the exact place it points to: the store's Source, cited.
Citation = Source


@dataclass(frozen=True)
class Prepared:
    """What to send to a chat model, and the sources its numbers refer to."""

    messages: list[Message]
    sources: list[Hit]


def build_messages(
    question: str, sources: Sequence[Hit], *, max_source_chars: int = 12_000
) -> list[Message]:
    """A system prompt with the numbered sources, then the question."""
    parts: list[str] = []
    used = 0
    for number, hit in enumerate(sources, start=1):
        block = f"[{number}] {Path(hit.path).name}, {_where(hit)}\n{hit.text.strip()}"
        if parts and used + len(block) > max_source_chars:
            break  # keep the prompt inside small context windows; best sources come first
        parts.append(block)
        used += len(block)
    context = "\n\n".join(parts) if parts else "(no sources were found)"
    return [
        Message("system", f"{SYSTEM_PROMPT}\n\nSources:\n\n{context}"),
        Message("user", question),
    ]


def _where(hit: Hit) -> str:
    return place(hit.page, hit.line_start, hit.line_end, page_word="page")


def prepare(
    searcher: Searcher, question: str, collections: Sequence[str] | None = None, *, k: int = 5
) -> Prepared:
    """Retrieve the top ``k`` chunks for ``question`` and build the chat messages."""
    sources = searcher.search(question, collections, k=k)
    return Prepared(build_messages(question, sources), sources)


def citations(answer: str, sources: Sequence[Hit | Source]) -> list[Citation]:
    """The sources cited in ``answer`` as ``[n]`` or ``[n, m]``, in order of first use."""
    seen: dict[int, Citation] = {}
    for match in _CITATION.finditer(answer):
        for raw in re.split(r"\s*[,，]\s*", match.group(1)):
            number = int(raw)
            if 1 <= number <= len(sources) and number not in seen:
                hit = sources[number - 1]
                seen[number] = Citation(
                    number, hit.path, hit.page, hit.line_start, hit.line_end, hit.text, cited=True
                )
    return list(seen.values())
