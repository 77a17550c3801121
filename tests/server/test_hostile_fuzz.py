"""Property-based bodies for every model route, lone surrogates and huge numbers mixed
into well-formed requests, through a real server over the tiny models: never a 5xx, and
every refusal in its own protocol's error shape (issue 48).

``test_schema`` fuzzes the OpenAPI document, whose generated strings and numbers are
tame; these strategies build the requests a hostile local process sends.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.server.conftest import Served, serve
from tests.server.test_schema import assert_error_shape

EXAMPLES = 12  # per route: 14 routes in ~30 s here

texts = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["\ud800", "\udfff", "a\ud83db", "\ud83d\ude00", "\x00", "", "hi"]),
)
numbers = st.one_of(
    st.integers(-(2**70), 2**70),
    st.floats(),  # NaN and infinities included: json.dumps writes NaN / Infinity
    st.sampled_from([1e20, -1e20, 2**63, 2**64, 10**30, -1, 0, 1, 0.5]),
)
token_ids = st.lists(numbers, min_size=1, max_size=4)
models = st.sampled_from(["tiny-chat", "tiny-embed", "\ud800", "nope"])
chat = st.just("tiny-chat") | models
embedder = st.just("tiny-embed") | models
messages = st.lists(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "system", "assistant"]), "content": texts}
    ),
    min_size=1,
    max_size=2,
)
sampling = {
    "seed": numbers,
    "temperature": numbers,
    "top_p": numbers,
    "max_tokens": numbers,
    "stop": texts,
}
ollama_options = st.fixed_dictionaries(
    {},
    optional={
        "seed": numbers,
        "top_k": numbers,
        "num_predict": numbers,
        "temperature": numbers,
        "num_ctx": numbers,
    },
)


def body(required: dict[str, Any], optional: dict[str, Any]) -> st.SearchStrategy[Any]:
    return st.fixed_dictionaries(required, optional=optional)


ROUTES: dict[str, st.SearchStrategy[Any]] = {
    "/v1/chat/completions": body(
        {"model": chat, "messages": messages},
        {**sampling, "logit_bias": st.dictionaries(texts, numbers, max_size=2)},
    ),
    "/v1/completions": body(
        {"model": chat, "prompt": texts | token_ids | st.lists(token_ids, max_size=2)}, sampling
    ),
    "/v1/embeddings": body(
        {"model": embedder, "input": texts | st.lists(texts, max_size=3) | token_ids},
        {"dimensions": numbers},
    ),
    "/v1/rerank": body(
        {"model": embedder, "query": texts, "documents": st.lists(texts, max_size=3)},
        {"top_n": numbers},
    ),
    "/v1/responses": body(
        {"model": chat, "input": texts},
        {"max_output_tokens": numbers, "temperature": numbers, "top_p": numbers},
    ),
    "/v1/messages": body(
        {"model": chat, "max_tokens": numbers, "messages": messages},
        {"temperature": numbers, "top_k": numbers, "top_p": numbers, "system": texts},
    ),
    "/v1/messages/count_tokens": body({"model": chat, "messages": messages}, {"system": texts}),
    "/api/chat": body(
        {"model": chat, "messages": messages, "stream": st.just(False)},
        {"options": ollama_options, "keep_alive": numbers | texts},
    ),
    "/api/generate": body(
        {"model": chat, "prompt": texts, "stream": st.just(False)},
        {"options": ollama_options, "context": token_ids, "system": texts},
    ),
    "/api/embed": body({"model": embedder, "input": texts | st.lists(texts, max_size=3)}, {}),
    "/api/embeddings": body({"model": embedder, "prompt": texts}, {}),
    "/api/show": body({"model": models}, {}),
}


@pytest.fixture(scope="module")
def fuzzed(
    tmp_path_factory: pytest.TempPathFactory, tiny_chat: Path, tiny_embed: Path
) -> Iterator[Served]:
    with serve(
        tmp_path_factory.mktemp("hostile-fuzz"), [tiny_chat, tiny_embed], max_tokens_limit=2
    ) as served:
        yield served


def _has_non_finite(value: Any) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, dict):
        return any(_has_non_finite(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_non_finite(v) for v in value)
    return False


@pytest.mark.parametrize("path", sorted(ROUTES))
def test_hostile_bodies_never_give_a_server_error(fuzzed: Served, path: str) -> None:
    headers = {"Authorization": f"Bearer {fuzzed.key}", "Content-Type": "application/json"}

    @given(request=ROUTES[path])
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def check(request: dict[str, Any]) -> None:
        raw = json.dumps(request).encode()  # lone surrogates as \ud800 escapes
        response = httpx.post(fuzzed.root + path, content=raw, headers=headers, timeout=60)
        assert response.status_code < 500, (path, raw[:300], response.text)
        if response.status_code >= 400:
            assert_error_shape(path, response.json())
        if _has_non_finite(request):  # NaN / Infinity never reach a route
            assert response.status_code == 400 and "invalid" in response.text

    check()
