"""A small indexed collection in the shared ``context`` (tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.root.context import AppContext


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
