"""The guard's route labels (its refusals are exercised end to end by test_safety and
test_key_scopes, on a real server)."""

from __future__ import annotations

from fastapi import APIRouter

from desktop.server._guard import known_routes, route_label


def test_metrics_labels_are_the_documented_routes_and_nothing_a_client_invents() -> None:
    router = APIRouter()

    @router.post("/v1/chat/completions")
    def chat() -> None: ...

    @router.get("/v1/responses/{response_id}")
    def stored() -> None: ...

    @router.get("/internal", include_in_schema=False)
    def internal() -> None: ...

    known = known_routes(router.routes)
    assert known == {"/v1/chat/completions"}
    assert route_label("/v1/chat/completions", known) == "/v1/chat/completions"
    # Every stored response shares one label; any other path is "other" (bounded labels).
    assert route_label("/v1/responses/resp_1", known) == "/v1/responses/{id}"
    assert route_label("/v1/responses/resp_1/input_items", known) == "/v1/responses/{id}"
    assert route_label("/v1/responses/a/b/c", known) == "other"
    assert route_label("/internal", known) == "other"
    assert route_label("/wp-admin/" + "x" * 500, known) == "other"
