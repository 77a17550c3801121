"""Split GGUFs: llama.cpp's gguf-split names, ``name-00001-of-00003.gguf``, in one place."""

from __future__ import annotations

import re
from collections.abc import Collection

from desktop.base.errors import ModelNotFound

SHARD_RE = re.compile(r"^(?P<stem>.+)-(?P<index>\d{5})-of-(?P<count>\d{5})\.gguf$")


def shard_stem(filename: str) -> str:
    """The model's name in ``filename``: without ``.gguf`` and without a shard suffix."""
    name = filename.rsplit("/", 1)[-1]
    match = SHARD_RE.match(name)
    return match["stem"] if match else name.removesuffix(".gguf")


def shard_names(filename: str) -> list[str]:
    """Every file of the split set ``filename`` belongs to, first to last ([it] if not split)."""
    match = SHARD_RE.match(filename)
    if not match:
        return [filename]
    count = int(match["count"])
    return [f"{match['stem']}-{i:05d}-of-{count:05d}.gguf" for i in range(1, count + 1)]


def first_shard(filename: str) -> str:
    """The file a split model is named by (its first shard); ``filename`` if not split."""
    return shard_names(filename)[0]


def is_first_shard(filename: str) -> bool:
    """Whether ``filename`` names a model: a single file or the first of its shards."""
    match = SHARD_RE.match(filename)
    return match is None or int(match["index"]) == 1


def shard_group(filename: str, available: Collection[str]) -> list[str]:
    """All shards of ``filename``'s split set, which must all be in ``available``."""
    wanted = shard_names(filename)
    missing = [w for w in wanted if w not in available]
    if missing:
        raise ModelNotFound(
            f"split model {shard_stem(filename)} is incomplete: {missing[0]} is missing"
        )
    return wanted
