"""Row 1: API keys live in the data folder in use, so a moved folder keeps them revocable."""

from __future__ import annotations

import os
from pathlib import Path

from desktop.base.config import NoPolicy
from desktop.root.context import build_context
from tests.robustness.cli import assert_clean, edgedesk


def test_keys_move_with_the_data_and_a_revoked_key_stops_working(
    tmp_path: Path, edgedesk_home: Path
) -> None:
    created = edgedesk("keys", "create", "alice")
    assert_clean(created, failed=False)
    alice = created.stdout.strip()
    moved = tmp_path / "elsewhere"
    assert_clean(edgedesk("data", "move", str(moved)), failed=False)

    listing = edgedesk("keys", "list")
    assert_clean(listing, failed=False)
    assert listing.stdout.startswith("alice\t")
    bob = edgedesk("keys", "create", "bob").stdout.strip()

    # What the server checks keys against (ServerRunner uses the context's key store).
    ctx = build_context(environ=dict(os.environ), policy=NoPolicy())
    assert ctx.paths.data_dir.resolve() == moved.resolve()
    assert ctx.key_store.verify(alice) == "alice"
    assert ctx.key_store.verify(bob) == "bob"
    ctx.data_lock.release()

    assert_clean(edgedesk("keys", "revoke", "alice"), failed=False)
    ctx = build_context(environ=dict(os.environ), policy=NoPolicy())
    assert ctx.key_store.verify(alice) is None
    assert ctx.key_store.verify(bob) == "bob"
    ctx.data_lock.release()
