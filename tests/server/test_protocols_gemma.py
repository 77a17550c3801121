"""One real end-to-end run per protocol: Gemma 3 270M behind Responses, Messages and Ollama.

The tiny models check the protocols' shapes; this checks that a real model's chat
template, tokenizer and end-of-turn make sensible, finished answers through each of them,
and that the three protocols and /v1/chat/completions give the same greedy answer.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anthropic
import ollama
import openai
import pytest

from tests.server.conftest import Served, serve

pytestmark = pytest.mark.slow
QUESTION = "What is the capital of France? Answer in one short sentence."


@pytest.fixture(scope="module")
def gemma_server(tmp_path_factory: pytest.TempPathFactory, gemma_path: Path
                 ) -> Iterator[Served]:
    with serve(tmp_path_factory.mktemp("gemma"), [gemma_path]) as served:
        yield served


@pytest.fixture(scope="module")
def model(gemma_server: Served) -> str:
    [only] = gemma_server.runner.app.state.services.models.ids()
    return str(only)


@pytest.fixture(scope="module")
def reference(gemma_server: Served, model: str) -> str:
    with openai.OpenAI(base_url=gemma_server.url, api_key=gemma_server.key,
                       max_retries=0) as client:
        reply = client.chat.completions.create(
            model=model, messages=[{"role": "user", "content": QUESTION}], temperature=0,
            max_tokens=48)
    text = str(reply.choices[0].message.content)
    assert len(text.split()) >= 2  # real words from the real tokenizer and template
    return text


def test_responses(gemma_server: Served, model: str, reference: str) -> None:
    with openai.OpenAI(base_url=gemma_server.url, api_key=gemma_server.key,
                       max_retries=0) as client:
        reply = client.responses.create(model=model, input=QUESTION, temperature=0,
                                        max_output_tokens=48)
        events = list(client.responses.create(model=model, input=QUESTION, temperature=0,
                                              max_output_tokens=48, stream=True))
    assert reply.output_text == reference
    assert events[-1].type in ("response.completed", "response.incomplete")
    assert events[-1].response.output[0].content[0].text == reference


def test_anthropic_messages(gemma_server: Served, model: str, reference: str) -> None:
    with anthropic.Anthropic(base_url=gemma_server.root, api_key=gemma_server.key,
                             max_retries=0) as claude:
        reply = claude.messages.create(model=model, max_tokens=48, extra_body={
            "temperature": 0}, messages=[{"role": "user", "content": QUESTION}])
        with claude.messages.stream(model=model, max_tokens=48, extra_body={"temperature": 0},
                                    messages=[{"role": "user", "content": QUESTION}]) as s:
            streamed = "".join(s.text_stream)
    assert reply.stop_reason in ("end_turn", "max_tokens")
    assert reply.content[0].text == reference == streamed


def test_ollama_chat(gemma_server: Served, model: str, reference: str) -> None:
    with ollama.Client(host=gemma_server.root,
                       headers={"Authorization": f"Bearer {gemma_server.key}"}) as lama:
        parts = list(lama.chat(model=model, stream=True, options={"temperature": 0,
                                                                  "num_predict": 48},
                               messages=[{"role": "user", "content": QUESTION}]))
    assert parts[-1].done
    assert "".join(p.message.content for p in parts) == reference
