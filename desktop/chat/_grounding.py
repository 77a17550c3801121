"""Answers grounded in a document collection: the prompt with numbered sources, and the
``[n]`` citations mapped back to files, pages and lines.

Retrieval embeds the question, so it runs on the thread that generates the answer
(``preparer``) before the first token; citations are read once the answer ends.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from desktop.base.errors import EdgeDeskError, ModelNotFound
from desktop.chat._conversation import Turn
from desktop.engine import Message
from desktop.retrieval import MAX_QUERY_CHARS, Citation, build_messages, citations
from desktop.store import Source

if TYPE_CHECKING:
    from desktop.resolve import ModelResolver
    from desktop.retrieval import Hit, Library

SOURCES_K = 5
Search = Callable[[str, Sequence[str]], "list[Hit]"]  # question, collections -> best chunks


def grounded_messages(messages: Sequence[Message], hits: Sequence[Hit]) -> list[Message]:
    """The chat with the numbered sources in front; the user's own system prompt is kept."""
    question = messages[-1].content if messages else ""
    sources_prompt = build_messages(question, hits)[0].content
    own = [m.content for m in messages if m.role == "system" and m.content.strip()]
    system = "\n\n".join([*own, sources_prompt])
    return [Message("system", system), *(m for m in messages if m.role != "system")]


def preparer(
    search: Search,
    collection: str,
    messages: Sequence[Message],
    given: list[Any] | None = None,
    *,
    question: str | None = None,
    more: Sequence[Hit] = (),
) -> Callable[[], tuple[list[Message], object]]:
    """A call for the generating thread: retrieve for the last question, build the prompt.

    ``question`` is what is searched for (default: the last message's text); ``more``
    are further numbered sources after the collection's (a long attachment's passages).
    The hits are also put in ``given``, for the saver that runs later on the same thread
    (a window's copy arrives by a queued signal, possibly after the answer is saved).
    """

    def prepare() -> tuple[list[Message], object]:
        asked = question if question is not None else (messages[-1].content if messages else "")
        # A pasted long question is searched by its start: a search takes at most
        # MAX_QUERY_CHARS (the whole question still reaches the model).
        asked = asked[:MAX_QUERY_CHARS]
        hits = [*(search(asked, [collection]) if collection else []), *more]
        if given is not None:
            given[:] = hits
        return grounded_messages(messages, hits), hits

    return prepare


def cite(turn: Turn) -> None:
    """Fill ``turn.citations`` from the ``[n]`` in its answer (all sources if none cited)."""
    if not turn.sources:
        turn.citations = []
        return
    cited = citations(turn.content, turn.sources)
    turn.citations = cited or [
        Citation(n, h.path, h.page, h.line_start, h.line_end, h.text)
        for n, h in enumerate(turn.sources, start=1)
    ]


def stored_sources(turn: Turn) -> tuple[Source, ...]:
    """The turn's sources as the store keeps them, each marked whether the answer cites it.

    ``turn.sources`` holds retrieval Hits while a chat is open, or the store's Sources
    once it was read back; both have the path, page, lines and text needed here.
    """
    if not turn.sources:
        return ()
    cited = {c.number for c in citations(turn.content, turn.sources)}
    return tuple(
        Source(n, s.path, s.page, s.line_start, s.line_end, s.text, n in cited)
        for n, s in enumerate(turn.sources, start=1)
    )


def was_cited(turn: Turn) -> bool:
    """Whether the answer itself cites the sources shown (else they were only given)."""
    return bool(turn.sources) and bool(citations(turn.content, turn.sources))


class EmbeddingModelMissing(ModelNotFound):
    """A grounded chat's collection needs a catalog embedding model not downloaded yet."""

    def __init__(self, collection: str, model: str) -> None:
        super().__init__(
            f"the collection '{collection}' needs the embedding model {model}, "
            f"which is not downloaded yet; run 'edgedesk models pull {model}' "
            "first"
        )
        self.collection = collection
        self.model = model


MissingModel = Callable[[str], "str | None"]  # collection -> catalog model to download


def missing_embedding_model(
    library: Library, resolver: ModelResolver, collection: str
) -> str | None:
    """The catalog embedding model ``collection`` needs and lacks (None: nothing to get).

    Blocks briefly (reads the collection list, looks for the model's files); a model that
    is not a catalog one, or is blocked, is left to fail with its own message.
    """
    info = next((c for c in library.collections() if c.name == collection), None)
    model = info.embedding_model if info is not None else None
    if not model:
        return None
    try:
        resolver.locate(model)
    except ModelNotFound:
        return model if resolver.catalog.find(model) is not None else None
    except EdgeDeskError:
        return None
    return None
