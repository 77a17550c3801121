"""A real context (scheduler, chat store, library) and a small indexed collection."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.base.config import NoPolicy
from desktop.root.context import AppContext, build_context


@pytest.fixture
def context() -> Iterator[AppContext]:
    """The composition root over this test's EDGEDESK_HOME, closed afterwards."""
    ctx = build_context(policy=NoPolicy())
    yield ctx
    ctx.close()


@pytest.fixture
def handbook(context: AppContext, tiny_embed: Path, tmp_path: Path) -> Path:
    """A collection "handbook" with one Markdown file, indexed with the tiny embedder."""
    docs = tmp_path / "handbook"
    docs.mkdir()
    (docs / "leave.md").write_text(
        "# Leave\n\nStaff get 25 days of paid leave a year.\n", encoding="utf-8"
    )
    context.library.add("handbook", [docs], str(tiny_embed))
    return docs / "leave.md"
