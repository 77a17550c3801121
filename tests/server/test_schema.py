"""Schemathesis over the served OpenAPI document: no input may cause a 5xx.

Every route is covered, the Responses, Anthropic and Ollama ones included; each error
must come in the shape of its own protocol.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from tests.server.conftest import Served, serve

EXAMPLES = 15


@pytest.fixture(scope="module")
def fuzz_server(
    tmp_path_factory: pytest.TempPathFactory, tiny_chat: Path, tiny_embed: Path
) -> Iterator[Served]:
    # A tiny generation limit keeps each generated request to a few tokens.
    with serve(
        tmp_path_factory.mktemp("fuzz"), [tiny_chat, tiny_embed], max_tokens_limit=4
    ) as served:
        yield served


def test_no_server_errors(fuzz_server: Served) -> None:
    # Driven by hand rather than schemathesis' pytest plugin, which does not run on this
    # pytest; the checks are the same: every operation, generated bodies, no 5xx.
    schema = schemathesis.openapi.from_url(f"{fuzz_server.root}/openapi.json")
    headers = {"Authorization": f"Bearer {fuzz_server.key}"}
    checked = []
    for result in schema.get_all_operations():
        operation = result.ok()

        @given(case=operation.as_strategy())
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def check(case) -> None:
            response = case.call(headers=headers, timeout=30)
            assert response.status_code < 500, (case.path, case.body, response.text)
            if response.status_code >= 400 and response.status_code != 405:
                assert_error_shape(case.path, response.json())

        check()
        checked.append(operation.path)
    assert {
        "/v1/chat/completions",
        "/v1/completions",
        "/v1/embeddings",
        "/v1/rerank",
        "/v1/responses",
        "/v1/responses/{response_id}",
        "/v1/messages",
        "/v1/messages/count_tokens",
        "/api/chat",
        "/api/generate",
        "/api/embed",
        "/api/embeddings",
        "/api/show",
        "/api/tags",
        "/api/ps",
        "/api/version",
    } <= set(checked)


def assert_error_shape(path: str, body: dict[str, Any]) -> None:
    """Each protocol's clients parse their own error body."""
    if path.startswith("/v1/messages"):
        assert body["type"] == "error" and set(body["error"]) == {"type", "message"}
    elif path.startswith("/api/"):
        assert set(body) == {"error"} and isinstance(body["error"], str)
    else:
        assert set(body["error"]) == {"message", "type", "param", "code"}
