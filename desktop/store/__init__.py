"""The local SQLite database: conversations, the Responses API's items, API usage, and
encryption at rest.

The face: ``__all__`` is the store's contract, and code outside ``desktop.store`` imports
only these names (an import-linter contract in pyproject.toml). The insides, whose names
start with ``_``, are free to change: ``_db`` (the connection and its schema,
``_migrations``), ``_chats`` (its SQL in ``_chat_sql``), ``_responses``, ``_usage``,
``_cipher`` and ``_atrest`` (SQLCipher, the key), ``_sealed`` (passphrase exports). A
name is imported from its inside module on first use, so importing the face loads
nothing heavy (numpy, sqlite-utils, the SQLCipher driver).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop.base.faces import lazy_exports

if TYPE_CHECKING:
    from desktop.store._atrest import EXIT_KEY, AtRest, KeyMissing, NoKeyring
    from desktop.store._chat_export import version_dict, version_message
    from desktop.store._chat_records import Attachment, ChatMessage
    from desktop.store._chats import MAX_ID, ChatStore, open_chat_store
    from desktop.store._cipher import DatabaseKey, connect, derived_key
    from desktop.store._cited_passages import Source, location, place
    from desktop.store._db import Database, fts_text, open_database
    from desktop.store._export_files import folder_for, reader_beside, write_beside
    from desktop.store._responses import ResponseStore
    from desktop.store._sealed import SEALED_SUFFIX, is_sealed, seal, unseal
    from desktop.store._usage import (
        WINDOW_CLIENT,
        WINDOW_GROUP,
        WINDOW_ROUTE,
        SeriesPoint,
        UsageGroup,
        UsageRow,
        UsageStore,
        csv_text,
        percentile,
    )
    from desktop.store._usage_recorder import UsageRecorder

__all__ = [
    "EXIT_KEY",
    "MAX_ID",
    "SEALED_SUFFIX",
    "WINDOW_CLIENT",
    "WINDOW_GROUP",
    "WINDOW_ROUTE",
    "AtRest",
    "Attachment",
    "ChatMessage",
    "ChatStore",
    "Database",
    "DatabaseKey",
    "KeyMissing",
    "NoKeyring",
    "ResponseStore",
    "SeriesPoint",
    "Source",
    "UsageGroup",
    "UsageRecorder",
    "UsageRow",
    "UsageStore",
    "connect",
    "csv_text",
    "derived_key",
    "folder_for",
    "fts_text",
    "is_sealed",
    "location",
    "open_chat_store",
    "open_database",
    "percentile",
    "place",
    "reader_beside",
    "seal",
    "unseal",
    "version_dict",
    "version_message",
    "write_beside",
]

# The inside module that defines each name of the face, imported on first use of the name.
_WHERE = {
    "AtRest": "_atrest",
    "EXIT_KEY": "_atrest",
    "KeyMissing": "_atrest",
    "NoKeyring": "_atrest",
    "version_dict": "_chat_export",
    "version_message": "_chat_export",
    "Attachment": "_chat_records",
    "ChatMessage": "_chat_records",
    "ChatStore": "_chats",
    "MAX_ID": "_chats",
    "open_chat_store": "_chats",
    "DatabaseKey": "_cipher",
    "connect": "_cipher",
    "derived_key": "_cipher",
    "Source": "_cited_passages",
    "location": "_cited_passages",
    "place": "_cited_passages",
    "Database": "_db",
    "fts_text": "_db",
    "open_database": "_db",
    "folder_for": "_export_files",
    "reader_beside": "_export_files",
    "write_beside": "_export_files",
    "ResponseStore": "_responses",
    "SEALED_SUFFIX": "_sealed",
    "is_sealed": "_sealed",
    "seal": "_sealed",
    "unseal": "_sealed",
    "SeriesPoint": "_usage",
    "UsageGroup": "_usage",
    "UsageRow": "_usage",
    "UsageStore": "_usage",
    "WINDOW_CLIENT": "_usage",
    "WINDOW_ROUTE": "_usage",
    "WINDOW_GROUP": "_usage",
    "csv_text": "_usage",
    "percentile": "_usage",
    "UsageRecorder": "_usage_recorder",
}

if not TYPE_CHECKING:  # mypy reads the imports above instead
    __getattr__, __dir__ = lazy_exports(__name__, _WHERE)
