"""A real remote engine (``edgedesk serve``, and llama-server where available) with the
real Gemma 3 270M, used through a second EdgeDesk's CLI and local API."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from desktop.base.config import NoPolicy, ServerSettings
from desktop.base.net import read_log
from desktop.cli import main
from desktop.root.context import build_context
from tests.benchmarks.llama_server_peer import Choice
from tests.near_tie import assert_same_answer, steps
from tests.remote.upstreams import edgedesk_serve, llama_server

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", params=["edgedesk-serve", "llama-server"])
def upstream(
    request: pytest.FixtureRequest, gemma_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str]]:
    """(base URL, the model id it lists) of a real server running Gemma."""
    work = tmp_path_factory.mktemp("upstream")
    if request.param == "edgedesk-serve":
        with edgedesk_serve(gemma_path, work / "home") as url:
            yield url, gemma_path.name.removesuffix(".gguf")
        return
    # Probed only here: the edgedesk-serve half needs no llama-server.
    peer: Choice = request.getfixturevalue("llama_server_for")(gemma_path)
    if peer.chosen is None:
        pytest.skip(peer.reason())
    with llama_server(peer.chosen.path, gemma_path, work) as url:
        yield url, "gemma"


def test_add_list_run_and_local_api(
    upstream: tuple[str, str], edgedesk_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url, model = upstream
    assert main(["remotes", "add", "org", url]) == 0
    assert main(["models", "list"]) == 0
    assert f"org/{model}" in capsys.readouterr().out
    assert (
        main(["run", f"org/{model}", "Name a colour.", "--max-tokens", "8", "--temperature", "0"])
        == 0
    )
    assert capsys.readouterr().out.strip()

    ctx = build_context(policy=NoPolicy())
    runner = ctx.new_api_server(
        settings=ServerSettings(require_key=False).model_copy(update={"port": 0})
    )
    runner.start()
    try:
        with openai.OpenAI(base_url=runner.url, api_key="x", max_retries=0, timeout=120) as client:
            assert f"org/{model}" in [m.id for m in client.models.list()]
            whole = client.chat.completions.create(
                model=f"org/{model}",
                max_tokens=8,
                temperature=0,
                messages=[{"role": "user", "content": "Say hello."}],
            )
            assert whole.choices[0].message.content
            assert whole.usage is not None and whole.usage.completion_tokens > 0
            parts = client.chat.completions.create(
                model=f"org/{model}",
                max_tokens=8,
                temperature=0,
                stream=True,
                messages=[{"role": "user", "content": "Say hello."}],
            )
            streamed = "".join(c.choices[0].delta.content or "" for c in parts if c.choices)
        # The same seedless greedy answer both times, up to llama.cpp's rounding for the
        # prompt the upstream found cached (tests/near_tie.py); the reference, with its
        # logprobs, straight from the upstream.
        with openai.OpenAI(base_url=url, api_key="x", max_retries=0, timeout=120) as direct:
            reference = direct.chat.completions.create(
                model=model,
                max_tokens=8,
                temperature=0,
                messages=[{"role": "user", "content": "Say hello."}],
                logprobs=True,
                top_logprobs=2,
            )
        answer = steps(reference.choices[0].logprobs.content)
        assert_same_answer(answer, whole.choices[0].message.content, "through EdgeDesk")
        assert_same_answer(answer, streamed, "streamed through EdgeDesk")
    finally:
        runner.stop()
        ctx.close()
    calls = [
        e
        for e in read_log(edgedesk_home / "logs" / "network.jsonl")
        if e.purpose == "remote engine" and e.path == "/v1/chat/completions"
    ]
    assert len(calls) == 3 and all(e.host == "127.0.0.1" and e.bytes_received for e in calls)
