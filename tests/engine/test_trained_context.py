"""An embedding model never loads past its trained context (issue #35, item 4).

With Settings → Context length 4096 a 512-position encoder (MiniLM, the tiny BERT) read
past its position table on a long input and llama.cpp aborted the whole process.
"""

from __future__ import annotations

from pathlib import Path

from desktop.engine._loader import load_engine
from desktop.engine._types import ModelSpec


def test_an_embedding_model_asked_for_4096_runs_at_its_trained_512(tiny_embed: Path) -> None:
    engine = load_engine(ModelSpec(tiny_embed, "t", kind="embedding", context_length=4096))
    try:
        assert engine.context_length == 512
        [vector] = engine.embed(["a " * 3000])  # windowed and pooled, no abort
        assert len(vector) == engine.embedding_dim()
    finally:
        engine.close()
