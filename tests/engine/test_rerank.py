"""Reranking with a rank-pooling (cross-encoder) model through the engine and scheduler."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.base.defaults import RANK_POOLING
from desktop.base.errors import InvalidRequest
from desktop.engine import _llama as llama
from desktop.engine._llama import LlamaEngine
from desktop.engine._llama_cpp import llama_cpp  # after the spin count, as the app
from desktop.engine._loader import load_engine
from desktop.engine._native import LoadOptions
from desktop.engine._scheduler import Scheduler
from desktop.engine._types import ModelSpec

# The same pair scored in a batch of another shape: llama.cpp's CPU kernels agree to
# 1e-5, CUDA's (another matrix kernel per batch size) moved scores by up to 0.4% on an
# H200 (0.0016 of 0.39). A neighbour that leaks into a document's attention moves its
# score by 8% or more on this model (a 3-word neighbour pasted in front: 0.168 -> 0.155),
# so this bound still fails a leak.
SAME_PAIR_REL = 2e-2


def test_the_header_and_llama_cpp_name_rank_pooling_by_one_number() -> None:
    # resolve tells a reranker by its header's pooling type, the engine by llama.cpp's:
    # one number, or a reranker loads as an embedding model.
    assert RANK_POOLING == llama_cpp.LLAMA_POOLING_TYPE_RANK == llama.RANK_POOLING


def test_scores_one_per_document_depending_on_query_and_document(tiny_reranker: Path) -> None:
    engine = LlamaEngine(tiny_reranker, LoadOptions(context_length=128, embedding=True))
    docs = ["the cat is a dog", "hello world", "你好 世界", "model chat desk edge"]
    scores = engine.rerank("hello world", docs)
    assert len(scores) == 4 and len(set(scores)) == 4  # a real score per pair
    assert engine.rerank("hello world", docs[1:2]) == pytest.approx(scores[1:2], rel=SAME_PAIR_REL)
    assert engine.rerank("the cat", docs) != pytest.approx(scores)  # the query matters
    many = engine.rerank("hello", ["edge " * 500, "cat"])  # a long document is cut to fit
    assert len(many) == 2


def test_embedding_model_is_refused_for_reranking(tiny_embed: Path) -> None:
    engine = LlamaEngine(tiny_embed, LoadOptions(context_length=128, embedding=True))
    with pytest.raises(InvalidRequest, match="not a reranking model"):
        engine.rerank("q", ["d"])


def test_scheduler_reranks_and_the_searcher_reorders_by_it(tiny_reranker: Path) -> None:
    spec = ModelSpec(tiny_reranker, "tiny-reranker", kind="reranker", context_length=128)
    scheduler = Scheduler(load_engine, lambda _ref: spec)
    docs = ["the cat is a dog", "hello world", "model chat desk edge"]
    scores = scheduler.rerank("tiny-reranker", "hello world", docs)
    assert len(scores) == 3
    assert [m.model_id for m in scheduler.loaded()] == ["tiny-reranker"]
    scheduler.close()


def test_a_documents_score_does_not_depend_on_what_shares_its_decode(tiny_reranker: Path) -> None:
    engine = LlamaEngine(tiny_reranker, LoadOptions(context_length=256, embedding=True))
    docs = ["walruses live in the arctic " * 3, "giraffes are tall", "the cat sat"]
    together = engine.rerank("walruses giraffes", docs)  # one decode, a long neighbour
    alone = [engine.rerank("walruses giraffes", [doc])[0] for doc in docs]
    assert together == pytest.approx(alone, rel=SAME_PAIR_REL)
    engine.close()
