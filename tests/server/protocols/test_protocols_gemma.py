"""One real end-to-end run per protocol: Gemma 3 270M behind Responses, Messages and Ollama.

The tiny models check the protocols' shapes; this checks that a real model's chat
template and tokenizer see the same prompt through each translation as through
/v1/chat/completions (the prompt token counts match exactly) and that each protocol
returns real words, whole and streamed. The answers themselves are not compared: on
Gemma a greedy answer whose prompt prefix came from the KV cache differs from the first
one (the prompt is evaluated in different batches), seen on /v1/chat/completions alone.
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
ASK = [{"role": "user", "content": QUESTION}]


@pytest.fixture(scope="module")
def gemma_server(tmp_path_factory: pytest.TempPathFactory, gemma_path: Path) -> Iterator[Served]:
    with serve(tmp_path_factory.mktemp("gemma"), [gemma_path]) as served:
        yield served


@pytest.fixture(scope="module")
def model(gemma_server: Served) -> str:
    [only] = gemma_server.runner.app.state.services.models.ids()
    return str(only)


@pytest.fixture(scope="module")
def prompt_tokens(gemma_server: Served, model: str) -> int:
    """The prompt's size through /v1/chat/completions, the reference translation."""
    with openai.OpenAI(
        base_url=gemma_server.url, api_key=gemma_server.key, max_retries=0
    ) as client:
        reply = client.chat.completions.create(
            model=model, messages=ASK, temperature=0, max_tokens=4
        )
    return int(reply.usage.prompt_tokens)


def _words(text: str) -> bool:
    return len(text.split()) >= 2  # real words from the real tokenizer


def test_responses(gemma_server: Served, model: str, prompt_tokens: int) -> None:
    with openai.OpenAI(
        base_url=gemma_server.url, api_key=gemma_server.key, max_retries=0
    ) as client:
        reply = client.responses.create(
            model=model, input=QUESTION, temperature=0, max_output_tokens=24
        )
        events = list(
            client.responses.create(
                model=model, input=QUESTION, temperature=0, max_output_tokens=24, stream=True
            )
        )
    assert reply.usage.input_tokens == prompt_tokens
    assert _words(reply.output_text)
    assert events[-1].type in ("response.completed", "response.incomplete")
    streamed = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert _words(streamed) and streamed == events[-1].response.output[0].content[0].text


def test_anthropic_messages(gemma_server: Served, model: str, prompt_tokens: int) -> None:
    with anthropic.Anthropic(
        base_url=gemma_server.root, api_key=gemma_server.key, max_retries=0
    ) as claude:
        reply = claude.messages.create(
            model=model, max_tokens=24, messages=ASK, extra_body={"temperature": 0}
        )
        with claude.messages.stream(
            model=model, max_tokens=24, messages=ASK, extra_body={"temperature": 0}
        ) as stream:
            streamed = "".join(stream.text_stream)
            final = stream.get_final_message()
    usage = reply.usage
    assert usage.input_tokens + (usage.cache_read_input_tokens or 0) == prompt_tokens
    assert reply.stop_reason in ("end_turn", "max_tokens") and _words(reply.content[0].text)
    assert _words(streamed) and final.content[0].text == streamed


def test_ollama_chat(gemma_server: Served, model: str, prompt_tokens: int) -> None:
    with ollama.Client(
        host=gemma_server.root, headers={"Authorization": f"Bearer {gemma_server.key}"}
    ) as lama:
        parts = list(
            lama.chat(
                model=model,
                messages=ASK,
                stream=True,
                options={"temperature": 0, "num_predict": 24},
            )
        )
    assert parts[-1].done and parts[-1].done_reason in ("stop", "length")
    assert parts[-1].prompt_eval_count == prompt_tokens
    assert _words("".join(p.message.content for p in parts))


def test_claude_code_system_reminders_on_gemmas_own_template(
    gemma_server: Served, model: str
) -> None:
    # Gemma's template refuses a system turn where a user turn must come: the reminder
    # is folded into the next user turn, so the request is answered and counts its words.
    turns = [
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": "Paris."},
        {"role": "system", "content": "<system-reminder>Answer briefly.</system-reminder>"},
        {"role": "user", "content": "And of Italy?"},
    ]
    with anthropic.Anthropic(
        base_url=gemma_server.root, api_key=gemma_server.key, max_retries=0, timeout=120
    ) as claude:
        reply = claude.messages.create(
            model=model,
            max_tokens=24,
            messages=turns,
            system="You are a geography tutor.",
            extra_body={"temperature": 0},
        )
        counted = [
            claude.messages.count_tokens(model=model, messages=m).input_tokens
            for m in (turns, [t for t in turns if t["role"] != "system"])
        ]
    assert _words(reply.content[0].text)
    assert counted[0] > counted[1] + 5  # the reminder's words are in the prompt
