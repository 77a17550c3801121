"""The composition root wires settings into the scheduler and resolver."""

from __future__ import annotations

from pathlib import Path

from desktop.base.config import NoPolicy
from desktop.root.context import build_context


def test_preload_warms_listed_models_and_reports_failures(
    edgedesk_home: Path, tiny_chat: Path
) -> None:
    ctx = build_context(
        cli_settings={
            "engine.preload": [str(tiny_chat), "no-such-model"],
            "engine.keep_alive_s": 30,
        },
        policy=NoPolicy(),
    )
    failures = ctx.preload()
    assert list(failures) == ["no-such-model"] and "unknown model" in failures["no-such-model"]
    loaded = ctx.scheduler.loaded()
    assert [m.model_id for m in loaded] == ["tiny-chat"]
    assert ctx.scheduler.keep_alive_s == 30
    ctx.close()
    assert ctx.scheduler.loaded() == []


def test_reranker_setting_wires_a_reranker_into_document_search(
    edgedesk_home: Path, tmp_path: Path
) -> None:
    from tests.fixtures.tiny_gguf import write_tiny_bert

    model = write_tiny_bert(tmp_path / "rr.gguf", pooling=4, seed=5)
    plain = build_context(policy=NoPolicy())
    assert plain.searcher.reranker is None
    ctx = build_context(cli_settings={"reranker_model": str(model)}, policy=NoPolicy())
    assert ctx.resolver(str(model)).kind == "reranker"
    reranker = ctx.searcher.reranker
    assert reranker is not None
    scores = reranker("hello world", ["the cat", "hello world"])
    assert len(scores) == 2 and scores[0] != scores[1]
    ctx.close()
    plain.close()
