"""The models the server lists and serves, as the resolver finds them."""

from __future__ import annotations

from pathlib import Path

from desktop.root.context import build_context
from desktop.server._model_directory import ResolverDirectory


def test_the_directory_lists_what_can_be_served_and_never_a_file_path(
    edgedesk_home: Path, tiny_chat: Path, tiny_embed: Path
) -> None:
    ctx = build_context()
    try:
        chat, embed = ctx.resolver.register(tiny_chat), ctx.resolver.register(tiny_embed)
        directory = ResolverDirectory(ctx.resolver, remote_ids=lambda: ["lab/llama"])
        assert directory.ids() == [chat, embed, "lab/llama"]
        assert not directory.has("no-such-model")
        # A client must not name files on this disk, even one that is a model.
        assert not directory.has(str(tiny_chat)) and directory.has(chat)
        assert directory.kind(chat) == ("chat", None)
        kind, pooling = directory.kind(embed)
        assert kind == "embedding" and pooling is not None
        facts = directory.describe(chat)
        assert facts["architecture"] == "llama" and facts["file_bytes"] == tiny_chat.stat().st_size
        assert not directory.vision(chat)  # no projector beside it
    finally:
        ctx.close()
