"""Split GGUF names: one helper for the Hub, pulls, imports and the installed index."""

from __future__ import annotations

import pytest

from desktop.base.errors import ModelNotFound
from desktop.catalog._shards import (
    first_shard,
    is_first_shard,
    shard_group,
    shard_names,
    shard_stem,
)

pytestmark = pytest.mark.fast

SPLIT = "Kimi-K2-Q2_K-00002-of-00003.gguf"


def test_one_shard_names_its_whole_set_and_the_model() -> None:
    assert shard_names(SPLIT) == [
        "Kimi-K2-Q2_K-00001-of-00003.gguf",
        "Kimi-K2-Q2_K-00002-of-00003.gguf",
        "Kimi-K2-Q2_K-00003-of-00003.gguf",
    ]
    assert first_shard(SPLIT) == "Kimi-K2-Q2_K-00001-of-00003.gguf"
    assert shard_stem(f"org/repo/{SPLIT}") == "Kimi-K2-Q2_K"
    assert not is_first_shard(SPLIT) and is_first_shard(first_shard(SPLIT))


def test_a_single_file_is_its_own_set() -> None:
    assert shard_names("glm-4-9b-Q4_K_M.gguf") == ["glm-4-9b-Q4_K_M.gguf"]
    assert shard_stem("glm-4-9b-Q4_K_M.gguf") == "glm-4-9b-Q4_K_M"
    assert is_first_shard("glm-4-9b-Q4_K_M.gguf")


def test_a_set_with_a_missing_shard_is_refused_by_name() -> None:
    present = shard_names(SPLIT)[:2]
    with pytest.raises(
        ModelNotFound,
        match="Kimi-K2-Q2_K is incomplete: Kimi-K2-Q2_K-00003-of-00003.gguf is missing",
    ):
        shard_group(SPLIT, present)
    assert shard_group(SPLIT, [*shard_names(SPLIT), "README.md"]) == shard_names(SPLIT)
