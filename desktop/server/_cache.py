"""Bounded LRU caches: whole responses to deterministic requests, and embeddings by text."""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Generic, TypeVar

V = TypeVar("V")


class LRUCache(Generic[V]):
    """A thread-safe LRU map holding at most ``capacity`` entries."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._data: OrderedDict[str, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> V | None:
        """The value for ``key`` (now most recently used), or None."""
        with self._lock:
            if key not in self._data:
                return None
            self._data.move_to_end(key)
            return self._data[key]

    def put(self, key: str, value: V) -> None:
        """Store ``value``, evicting the least recently used entry when full."""
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.capacity:
                self._data.popitem(last=False)

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)


def is_deterministic(body: Mapping[str, object]) -> bool:
    """Whether the same request must give the same answer (temperature 0 or a fixed seed)."""
    return body.get("temperature") == 0 or body.get("seed") is not None


def request_key(route: str, body: Mapping[str, object]) -> str:
    """A cache key over everything that shapes the answer (not ``user`` or ``stream``)."""
    shaped = {k: v for k, v in body.items() if k not in {"user", "stream", "stream_options"}}
    text = json.dumps([route, shaped], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def embedding_key(model: str, text: str) -> str:
    """A cache key for one text's vector from ``model``."""
    return hashlib.sha256(f"{model}\0{text}".encode()).hexdigest()


def embedding_ids_key(model: str, tokens: list[int]) -> str:
    """A cache key for the vector of a list of token ids from ``model`` (never a text's)."""
    return hashlib.sha256(f"{model}\1{','.join(map(str, tokens))}".encode()).hexdigest()
