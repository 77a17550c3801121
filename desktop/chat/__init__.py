"""The conversation core, with no Qt: turns, grounding, citations, saving, one turn run.

The window (``desktop.ui.chat.view``), the terminal chat (``edgedesk chat``) and
``edgedesk ask`` are views over it. See ``_session.ChatCore`` for which thread calls what.

The face: ``__all__`` is the conversation core's contract, and code outside
``desktop.chat`` imports only these names (an import-linter contract in pyproject.toml).
The insides, whose names start with ``_``, are free to change: ``_conversation`` (turns),
``_session`` (one turn run), ``_persistence`` (saving), ``_grounding`` (sources and
citations), ``_attachments``, ``_approval``, ``_capabilities``, ``_parameters``,
``_thinking``, ``_document_tools``. A name is imported from its inside module on first
use, so importing the face loads none of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop.base.faces import lazy_exports

if TYPE_CHECKING:
    from desktop.chat._approval import ApprovalAsk, ApprovalBatch, Decision
    from desktop.chat._attachments import Attachment, from_bytes, from_path
    from desktop.chat._capabilities import known_to_see, model_context, model_sees, takes_pictures
    from desktop.chat._conversation import DEFAULT_TITLE, Conversation, ToolStep, Turn, tools_switch
    from desktop.chat._document_tools import (
        LIST_SPEC,
        READ_SPEC,
        SEARCH_SPEC,
        DocumentAccess,
        DocumentTools,
    )
    from desktop.chat._grounding import (
        SOURCES_K,
        EmbeddingModelMissing,
        Search,
        cite,
        missing_embedding_model,
        was_cited,
    )
    from desktop.chat._parameters import LIMITS, Sampling
    from desktop.chat._persistence import ChatSaver
    from desktop.chat._session import ChatCore, ChatStreamer, PendingTurn
    from desktop.chat._thinking import model_thinks

__all__ = [
    "DEFAULT_TITLE",
    "LIMITS",
    "LIST_SPEC",
    "READ_SPEC",
    "SEARCH_SPEC",
    "SOURCES_K",
    "ApprovalAsk",
    "ApprovalBatch",
    "Attachment",
    "ChatCore",
    "ChatSaver",
    "ChatStreamer",
    "Conversation",
    "Decision",
    "DocumentAccess",
    "DocumentTools",
    "EmbeddingModelMissing",
    "PendingTurn",
    "Sampling",
    "Search",
    "ToolStep",
    "Turn",
    "cite",
    "from_bytes",
    "from_path",
    "known_to_see",
    "missing_embedding_model",
    "model_context",
    "model_sees",
    "model_thinks",
    "takes_pictures",
    "tools_switch",
    "was_cited",
]

# The inside module that defines each name of the face, imported on first use of the name.
_WHERE = {
    "ApprovalAsk": "_approval",
    "ApprovalBatch": "_approval",
    "Decision": "_approval",
    "Attachment": "_attachments",
    "from_bytes": "_attachments",
    "from_path": "_attachments",
    "known_to_see": "_capabilities",
    "model_context": "_capabilities",
    "model_sees": "_capabilities",
    "takes_pictures": "_capabilities",
    "Conversation": "_conversation",
    "DEFAULT_TITLE": "_conversation",
    "ToolStep": "_conversation",
    "Turn": "_conversation",
    "tools_switch": "_conversation",
    "DocumentAccess": "_document_tools",
    "DocumentTools": "_document_tools",
    "LIST_SPEC": "_document_tools",
    "READ_SPEC": "_document_tools",
    "SEARCH_SPEC": "_document_tools",
    "EmbeddingModelMissing": "_grounding",
    "SOURCES_K": "_grounding",
    "Search": "_grounding",
    "cite": "_grounding",
    "missing_embedding_model": "_grounding",
    "was_cited": "_grounding",
    "LIMITS": "_parameters",
    "Sampling": "_parameters",
    "ChatSaver": "_persistence",
    "ChatCore": "_session",
    "ChatStreamer": "_session",
    "PendingTurn": "_session",
    "model_thinks": "_thinking",
}

if not TYPE_CHECKING:  # mypy reads the imports above instead
    __getattr__, __dir__ = lazy_exports(__name__, _WHERE)
