"""Error bodies in the shape each protocol's clients parse (the handlers are exercised
end to end by test_safety, test_anthropic_api and test_ollama_api)."""

from __future__ import annotations

import json

import pytest

from desktop.server._error_responses import error_payload, error_response

pytestmark = pytest.mark.fast


def test_each_protocol_gets_its_own_error_shape() -> None:
    def shaped(path: str, status: int = 404) -> object:
        return error_payload(path, status, "no such model", type_="invalid_request_error", code="x")

    assert shaped("/v1/chat/completions") == {
        "error": {
            "message": "no such model",
            "type": "invalid_request_error",
            "param": None,
            "code": "x",
        }
    }
    # Anthropic's SDK raises by status; the body names the type for that status.
    assert shaped("/v1/messages") == {
        "type": "error",
        "error": {"type": "not_found_error", "message": "no such model"},
    }
    assert shaped("/v1/messages/count_tokens", 500) == {
        "type": "error",
        "error": {"type": "api_error", "message": "no such model"},
    }
    assert shaped("/api/chat") == {"error": "no such model"}


def test_an_error_response_carries_status_headers_and_param() -> None:
    response = error_response(
        429,
        "slow down",
        "rate_limit_error",
        "rate_limit_exceeded",
        param="model",
        headers={"Retry-After": "3"},
        path="/v1/embeddings",
    )
    assert response.status_code == 429 and response.headers["retry-after"] == "3"
    assert json.loads(response.body)["error"]["param"] == "model"
