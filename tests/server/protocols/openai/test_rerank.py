"""POST /v1/rerank on the real server, with a real tiny cross-encoder GGUF (rank pooling).

The openai client has no rerank call, so these speak raw httpx, as Continue, LiteLLM
and Dify do.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from desktop.server._protocols.openai.events import relevance
from desktop.server._protocols.openai.translate import MAX_RERANK_DOCUMENTS
from tests.conftest import wait_until
from tests.server.conftest import Served, serve

DOCS = ["the cat sat on the mat", {"text": "hello world"}, "edge cases of hello", "world"]
TEXTS = ["the cat sat on the mat", "hello world", "edge cases of hello", "world"]


@pytest.fixture(scope="module")
def rr_server(
    tmp_path_factory: pytest.TempPathFactory, tiny_chat: Path, tiny_embed: Path, tiny_reranker: Path
) -> Iterator[Served]:
    with serve(tmp_path_factory.mktemp("rr-srv"), [tiny_chat, tiny_embed, tiny_reranker]) as served:
        yield served


def _post(server: Served, body: dict[str, object], **headers: str) -> httpx.Response:
    return httpx.post(
        f"{server.url}/rerank",
        json=body,
        timeout=30,
        headers={"Authorization": f"Bearer {server.key}", **headers},
    )


def test_results_are_the_models_scores_best_first(rr_server: Served) -> None:
    response = _post(
        rr_server,
        {"model": "tiny-reranker", "query": "hello world", "documents": DOCS},
        **{"X-Request-ID": "rr-1"},
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert response.headers["x-request-id"] == "rr-1" and body["id"].endswith("rr-1")
    assert body["object"] == "list" and body["model"] == "tiny-reranker"
    results = body["results"]
    assert sorted(r["index"] for r in results) == [0, 1, 2, 3]
    scores = [r["relevance_score"] for r in results]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) > 1
    assert all(0.0 < x < 1.0 for x in scores)
    assert all("document" not in r for r in results)  # not asked for
    # The same scores the engine gives through the scheduler, as 0-1 relevance.
    direct = rr_server.scheduler.rerank("tiny-reranker", "hello world", TEXTS)
    by_index = {r["index"]: r["relevance_score"] for r in results}
    assert [by_index[i] for i in range(4)] == pytest.approx(
        [relevance(x) for x in direct], rel=1e-4
    )
    usage = body["usage"]
    assert usage["prompt_tokens"] == usage["total_tokens"] > 4 * 3


def test_top_n_and_return_documents(rr_server: Served) -> None:
    full = _post(rr_server, {"model": "tiny-reranker", "query": "hello", "documents": DOCS}).json()[
        "results"
    ]
    top = _post(
        rr_server,
        {
            "model": "tiny-reranker",
            "query": "hello",
            "documents": DOCS,
            "top_n": 2,
            "return_documents": True,
        },
    ).json()["results"]
    assert [r["index"] for r in top] == [r["index"] for r in full[:2]]
    assert [r["document"]["text"] for r in top] == [TEXTS[r["index"]] for r in top]
    many = _post(
        rr_server, {"model": "tiny-reranker", "query": "hello", "documents": DOCS, "top_n": 50}
    ).json()["results"]
    assert len(many) == 4


def _error(response: httpx.Response, status: int = 400) -> dict[str, str]:
    assert response.status_code == status, response.text
    error: dict[str, str] = response.json()["error"]
    assert error["type"] == "invalid_request_error"
    return error


def test_bad_requests_name_the_field(rr_server: Served) -> None:
    empty = _error(_post(rr_server, {"model": "tiny-reranker", "query": "q", "documents": []}))
    assert empty["param"] == "documents" and "empty" in empty["message"]
    too_many = _error(
        _post(
            rr_server,
            {
                "model": "tiny-reranker",
                "query": "q",
                "documents": ["d"] * (MAX_RERANK_DOCUMENTS + 1),
            },
        )
    )
    assert too_many["param"] == "documents" and str(MAX_RERANK_DOCUMENTS) in too_many["message"]
    missing = _error(_post(rr_server, {"query": "q", "documents": ["d"]}))
    assert missing["param"] == "model"
    no_query = _error(_post(rr_server, {"model": "tiny-reranker", "documents": ["d"]}))
    assert no_query["param"] == "query"
    unknown = _error(_post(rr_server, {"model": "nope", "query": "q", "documents": ["d"]}), 404)
    assert unknown["param"] == "model" and "tiny-reranker" in unknown["message"]


def test_a_model_that_is_not_a_reranker_is_refused_without_loading(rr_server: Served) -> None:
    loaded_before = {m.model_id for m in rr_server.scheduler.loaded()}
    chat = _error(_post(rr_server, {"model": "tiny-chat", "query": "q", "documents": ["d"]}))
    assert chat["param"] == "model"
    assert chat["message"].startswith("model tiny-chat is not a reranking model (chat, pooling")
    assert "bge-reranker" in chat["message"]
    embed = _error(_post(rr_server, {"model": "tiny-embed", "query": "q", "documents": ["d"]}))
    assert "pooling type cls" in embed["message"]
    loaded = {m.model_id for m in rr_server.scheduler.loaded()}
    assert loaded - loaded_before <= {"tiny-reranker"}  # neither was loaded to find out


def test_key_is_required_and_requests_are_logged_and_counted(rr_server: Served) -> None:
    unauth = httpx.post(
        f"{rr_server.url}/rerank", json={"model": "tiny-reranker", "query": "q", "documents": ["d"]}
    )
    assert unauth.status_code == 401
    ok = _post(
        rr_server,
        {"model": "tiny-reranker", "query": "secret-query-271", "documents": ["secret-doc-828"]},
        **{"X-Request-ID": "rr-log"},
    )
    assert ok.status_code == 200
    path = rr_server.ctx.paths.log_dir / "access.log"

    def logged() -> str:  # the first line written makes the file: it may not be there yet
        text = path.read_text() if path.exists() else ""
        return text if "rr-log" in text else ""

    log = wait_until(logged, 30, "the request's access-log line")
    assert "secret-query-271" not in log and "secret-doc-828" not in log
    record = next(json.loads(line) for line in log.splitlines() if "rr-log" in line)
    assert record["route"] == "/v1/rerank" and record["model"] == "tiny-reranker"
    assert record["status"] == 200 and record["tokens_in"] == ok.json()["usage"]["prompt_tokens"]
    metrics = httpx.get(
        f"{rr_server.root}/metrics", headers={"Authorization": f"Bearer {rr_server.key}"}
    ).text
    assert 'edgedesk_requests_total{route="/v1/rerank",status="200"}' in metrics


def test_rerank_runs_beside_a_running_stream_without_cutting_it_short(
    tmp_path: Path, tiny_chat: Path, tiny_reranker: Path
) -> None:
    # Each chat token takes 20 ms, so a 1000-token stream holds its slot ~20 s.
    with serve(tmp_path / "beside", [tiny_chat, tiny_reranker], delay_s=0.02) as srv:
        auth = {"Authorization": f"Bearer {srv.key}"}
        finishes: list[str] = []
        started = threading.Event()
        stop = threading.Event()

        def chat() -> None:
            body = {
                "model": "tiny-chat",
                "messages": [{"role": "user", "content": "hi"}],
                "max_tokens": 1000,
                "temperature": 0,
                "stream": True,
            }
            with httpx.stream(
                "POST", f"{srv.url}/chat/completions", json=body, headers=auth, timeout=30
            ) as response:
                for line in response.iter_lines():
                    started.set()
                    if '"finish_reason": "' in line:
                        finishes.append(json.loads(line[6:])["choices"][0]["finish_reason"])
                    if stop.is_set():
                        break

        worker = threading.Thread(target=chat)
        worker.start()
        assert started.wait(10)
        response = httpx.post(
            f"{srv.url}/rerank",
            headers=auth,
            timeout=30,
            json={"model": "tiny-reranker", "query": "hello", "documents": ["a", "b"]},
        )
        # Answered while the stream still runs: another model does not wait for it...
        assert response.status_code == 200 and finishes == []
        assert "rerank" in srv.journal and srv.scheduler.busy
        stop.set()
        worker.join(10)
        # ...and the stream was neither cut short nor cancelled by it (it only ended
        # when its client left).
        assert finishes == [] and srv.journal.count("chunk") >= 2
