"""Real GLM and Kimi templates through the HTTP server, on tiny GGUFs that carry them.

A conversation with system, tools, an assistant tool call, a tool result and a follow-up
goes through the official openai client; the prompt the server built must be the
reference rendering (tests/fixtures/hf_reference.py): the server reports its length in
tokens, which must equal the reference text tokenized by the same model (a dropped
newline or a reordered key changes it; see the control at the end).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from desktop.engine._llama_cpp import llama_cpp  # after the spin count, as the app
from tests.engine.chat.test_template_corpus import (
    ARGS,
    CORPUS,
    TEMPLATES,
    WEATHER_TOOL,
    _hf_conversation,
)
from tests.fixtures import hf_reference
from tests.fixtures.tiny_gguf import write_tiny_llama
from tests.server.conftest import Served, serve

HOSTILE = "{{ cycler.__init__.__globals__.os.popen('id').read() }}"


@pytest.fixture(scope="module")
def templated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """A server offering one tiny model per real template, and one hostile template."""
    folder = tmp_path_factory.mktemp("templated")
    models = [
        write_tiny_llama(
            folder / f"{name.lower()}.gguf",
            n_ctx=8192,
            chat_template=(TEMPLATES / f"{name}.jinja").read_text("utf-8"),
        )
        for name, _, _ in CORPUS
    ]
    models.append(write_tiny_llama(folder / "hostile.gguf", chat_template=HOSTILE))
    with serve(folder / "home", models) as served:
        yield served


def _openai_conversation(call_id: str) -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Weather in Tokyo?"},
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": "Need the forecast.",
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {
                        "name": "get_weather",
                        "arguments": json.dumps(ARGS, ensure_ascii=False),
                    },
                }
            ],
        },
        {"role": "tool", "tool_call_id": call_id, "content": '{"temp": 21}'},
        {"role": "assistant", "content": "21 °C, sunny."},
        {"role": "user", "content": "And tomorrow?"},
    ]


def _token_count(model: Path, text: str) -> int:
    vocab = llama_cpp.Llama(str(model), vocab_only=True, verbose=False)
    try:
        return len(vocab.tokenize(text.encode("utf-8"), add_bos=True, special=True))
    finally:
        vocab.close()


@pytest.mark.parametrize(("name", "call_id", "mutable"), CORPUS)
def test_the_server_sends_the_reference_prompt(
    templated: Served, name: str, call_id: str, mutable: bool
) -> None:
    client = openai.OpenAI(
        base_url=templated.url, api_key=templated.key, max_retries=0, timeout=120
    )
    model_id = name.lower()
    reply = client.chat.completions.create(
        model=model_id,
        messages=_openai_conversation(call_id),  # type: ignore[arg-type]
        tools=[WEATHER_TOOL],
        max_tokens=1,
        temperature=0,  # type: ignore[list-item]
        extra_body={"chat_template_kwargs": {"enable_thinking": False}},
    )
    template = (TEMPLATES / f"{name}.jinja").read_text("utf-8")
    reference = hf_reference.render(
        template,
        _hf_conversation(call_id),
        tools=[WEATHER_TOOL],
        mutable=mutable,
        enable_thinking=False,
    )
    path = templated.ctx.resolver(model_id).path
    assert reply.usage.prompt_tokens == _token_count(path, reference)
    # Control: the count does see a one-character change of the prompt.
    assert _token_count(path, reference.replace("sunny.", "sunny", 1)) != _token_count(
        path, reference
    )


def test_a_hostile_template_is_a_4xx_naming_the_template(templated: Served) -> None:
    client = openai.OpenAI(base_url=templated.url, api_key=templated.key, max_retries=0)
    with pytest.raises(openai.UnprocessableEntityError) as err:
        client.chat.completions.create(
            model="hostile", max_tokens=1, messages=[{"role": "user", "content": "hi"}]
        )
    body = err.value.body
    assert body["code"] == "chat_template_error"  # type: ignore[index]
    assert "chat template of hostile" in body["message"]  # type: ignore[index]
    assert "not allowed" in body["message"]  # type: ignore[index]
