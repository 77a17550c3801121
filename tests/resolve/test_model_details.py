"""ModelResolver.details: what the window's model details show, read without a display."""

from __future__ import annotations

import hashlib
from pathlib import Path

from desktop.engine._prompting.templates import ARCHITECTURE_TEMPLATES
from desktop.root.context import AppContext


def test_a_file_without_a_template_of_a_known_architecture_uses_the_built_in_one(
    gemma_path: Path,
    context: AppContext,
) -> None:
    details = context.resolver.details(str(gemma_path))
    assert details.info.architecture == "gemma3" and details.info.chat_template is None
    assert details.template_source == "architecture:gemma3"
    assert details.chat_template == ARCHITECTURE_TEMPLATES["gemma3"]
    [only] = details.files
    assert only.size == gemma_path.stat().st_size
    # As allocated: its 3 global layers keep the context, its 15 sliding-window layers
    # the 4 slots' 512-token windows and a 512-token micro-batch (1 KiB per layer, f16).
    fit = details.fit
    assert (fit.parallel, fit.cache_type, fit.swa_full) == (4, "f16", False)
    ctx = fit.context_length
    assert details.kv_cache_bytes == 1024 * (3 * ctx + 15 * min(ctx, 4 * 512 + 512))


def test_a_file_that_cannot_chat_says_so_and_known_digests_are_not_recomputed(
    tiny_chat_no_template: Path,
    context: AppContext,
) -> None:
    known = {str(tiny_chat_no_template.resolve()): "0" * 64}
    details = context.resolver.details(str(tiny_chat_no_template), known)
    assert (details.chat_template, details.template_source) == (None, "")
    assert details.files[0].sha256 == "0" * 64  # given, not hashed again
    fresh = context.resolver.details(str(tiny_chat_no_template))
    assert fresh.files[0].sha256 == hashlib.sha256(tiny_chat_no_template.read_bytes()).hexdigest()


def test_a_vision_model_shows_its_projector_and_counts_it_in_the_memory(
    edgedesk_home: Path, tiny_chat: Path, tiny_projector: Path, context: AppContext
) -> None:
    text_only = context.resolver.details(str(tiny_chat))
    assert text_only.projector is None
    model_id = context.installed.import_file(tiny_chat, projector=tiny_projector).id
    seeing = context.resolver.details(model_id)
    assert seeing.projector is not None
    assert seeing.projector.path == tiny_projector.resolve()
    assert seeing.projector.sha256 == hashlib.sha256(tiny_projector.read_bytes()).hexdigest()
    assert (
        seeing.fit.estimated_bytes - text_only.fit.estimated_bytes >= tiny_projector.stat().st_size
    )
