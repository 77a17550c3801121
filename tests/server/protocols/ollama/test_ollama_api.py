"""Ollama's ``/api/*`` end to end: a real server over the tiny models, the official ollama client."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import ollama
import openai
import pytest

from tests.fixtures.tiny_gguf import write_tiny_llama
from tests.near_tie import assert_same_answer, steps, steps_of_completion
from tests.server.conftest import Served, serve

HI = [{"role": "user", "content": "hello world"}]


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory, tiny_chat: Path, tiny_embed: Path
) -> Iterator[Served]:
    """The tiny chat and embedding models, and a tiny model with FIM tokens."""
    fim = write_tiny_llama(tmp_path_factory.mktemp("fim") / "tiny-fim.gguf", fim=True, seed=7)
    with serve(tmp_path_factory.mktemp("srv"), [tiny_chat, tiny_embed, fim]) as server:
        yield server


@pytest.fixture
def lama(served: Served) -> Iterator[ollama.Client]:
    with ollama.Client(
        host=served.root, headers={"Authorization": f"Bearer {served.key}"}, timeout=60
    ) as c:
        yield c


@pytest.fixture
def oai(served: Served) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=served.url, api_key=served.key, max_retries=0, timeout=60) as c:
        yield c


def test_list_show_version_and_ps(lama: ollama.Client, served: Served) -> None:
    names = [m.model for m in lama.list().models]
    assert names == ["tiny-chat", "tiny-embed", "tiny-fim"]
    chat = lama.list().models[0]
    assert chat.size > 0 and chat.details.format == "gguf"
    assert chat.details.family == "llama"
    shown = lama.show("tiny-chat:latest")  # Ollama's default tag names the same model
    assert "tools" in shown.capabilities
    assert shown.modelinfo["general.architecture"] == "llama"
    assert lama.show("tiny-embed").capabilities == ["embedding"]
    version = httpx.get(f"{served.root}/api/version").json()["version"]
    assert tuple(int(p) for p in version.split(".")) >= (0, 6, 4)
    lama.generate(model="tiny-chat", prompt="")  # Ollama's way to load a model
    assert "tiny-chat" in [m.model for m in lama.ps().models]


def test_streamed_chat_is_the_chat_routes_answer(lama: ollama.Client, oai: openai.OpenAI) -> None:
    parts = list(
        lama.chat(
            model="tiny-chat",
            messages=HI,
            stream=True,
            options={"temperature": 0, "num_predict": 12},
        )
    )
    chat = oai.chat.completions.create(
        model="tiny-chat", messages=HI, temperature=0, max_tokens=12, logprobs=True, top_logprobs=2
    )
    reference = steps(chat.choices[0].logprobs.content)
    assert len(parts) > 3 and all(not p.done for p in parts[:-1])
    # One answer up to llama.cpp's rounding for the prompt found cached (near_tie.py).
    assert_same_answer(reference, "".join(p.message.content for p in parts), "ollama stream")
    last = parts[-1]
    assert last.done and last.done_reason == "length" and last.eval_count == 12
    assert last.prompt_eval_count == chat.usage.prompt_tokens
    whole = lama.chat(model="tiny-chat", messages=HI, options={"temperature": 0, "num_predict": 12})
    assert_same_answer(reference, whole.message.content, "ollama whole")


def test_chat_with_tools_and_json_format(lama: ollama.Client) -> None:
    schema = {
        "type": "object",
        "properties": {"answer": {"enum": ["yes", "no"]}},
        "required": ["answer"],
        "additionalProperties": False,
    }
    reply = lama.chat(
        model="tiny-chat",
        messages=HI,
        format=schema,
        options={"num_predict": 200, "temperature": 0.7},
    )
    assert json.loads(reply.message.content)["answer"] in ("yes", "no")
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_time",
                "parameters": {"type": "object", "properties": {"zone": {"type": "string"}}},
            },
        }
    ]
    plain = lama.chat(model="tiny-chat", messages=HI, options={"num_predict": 1})
    offered = lama.chat(model="tiny-chat", messages=HI, tools=tools, options={"num_predict": 1})
    assert offered.prompt_eval_count > plain.prompt_eval_count + 5


def test_generate_with_suffix_is_fill_in_the_middle(
    lama: ollama.Client, oai: openai.OpenAI
) -> None:
    prefix, suffix = "def add(a, b):", "return the cat"
    options = {"temperature": 0, "num_predict": 8}
    middle = lama.generate(model="tiny-fim", prompt=prefix, suffix=suffix, options=options)
    same = oai.completions.create(
        model="tiny-fim", prompt=prefix, suffix=suffix, temperature=0, max_tokens=8, logprobs=2
    )
    # One answer up to llama.cpp's rounding for the prompt found cached (near_tie.py).
    reference = steps_of_completion(same.choices[0].logprobs)
    assert middle.done
    assert_same_answer(reference, middle.response, "ollama generate")
    streamed = list(
        lama.generate(model="tiny-fim", prompt=prefix, suffix=suffix, options=options, stream=True)
    )
    assert_same_answer(reference, "".join(p.response for p in streamed), "ollama stream")
    with pytest.raises(ollama.ResponseError) as refused:
        lama.generate(model="tiny-chat", prompt=prefix, suffix=suffix)
    assert refused.value.status_code == 400
    raw = lama.generate(model="tiny-chat", prompt="Once upon", raw=True, options=options)
    text = oai.completions.create(
        model="tiny-chat", prompt="Once upon", temperature=0, max_tokens=8, logprobs=2
    )
    assert_same_answer(steps_of_completion(text.choices[0].logprobs), raw.response, "raw")


def test_embed_and_the_older_embeddings(lama: ollama.Client, oai: openai.OpenAI) -> None:
    reply = lama.embed(model="tiny-embed", input=["hello", "world"])
    assert len(reply.embeddings) == 2 and reply.prompt_eval_count > 0
    same = oai.embeddings.create(model="tiny-embed", input=["hello", "world"])
    assert reply.embeddings[0] == pytest.approx(same.data[0].embedding, abs=1e-6)
    old = lama.embeddings(model="tiny-embed", prompt="hello")
    assert list(old.embedding) == pytest.approx(reply.embeddings[0], abs=1e-6)


def test_a_missing_key_is_refused(served: Served) -> None:
    with ollama.Client(host=served.root) as keyless, pytest.raises(ollama.ResponseError) as caught:
        keyless.list()
    assert caught.value.status_code == 401 and "keys create" in caught.value.error


def test_refusals_and_keep_alive(lama: ollama.Client) -> None:
    with pytest.raises(ollama.ResponseError) as missing:
        lama.chat(model="nope", messages=HI)
    assert missing.value.status_code == 404
    with pytest.raises(ollama.ResponseError) as refused:
        lama.chat(model="tiny-chat", messages=HI, options={"mirostat": 2})
    assert refused.value.status_code == 400 and "mirostat" in refused.value.error
    lama.chat(model="tiny-chat", messages=HI, options={"num_predict": 1}, keep_alive=0)
    assert "tiny-chat" not in [m.model for m in lama.ps().models]


def test_stream_lines_carry_thinking_then_words_then_calls() -> None:
    import time as clock

    from desktop.engine._prompting.toolcalls import gate_calls
    from desktop.engine._types import ChatCall, Delta, Message, ToolSpec, Usage
    from desktop.server._answer import answer_pieces
    from desktop.server._asgi import RequestInfo
    from desktop.server._generation import answer_stream
    from desktop.server._protocols.ollama.routes import OllamaAnswer
    from desktop.server._pump import TimedStream

    generated = [
        Delta(reasoning="let me see"),
        Delta(text="Checking. "),
        Delta(text='<tool_call>{"name": "get_time", "arguments": {}}'),
        Delta(text="</tool_call>"),
        Delta(finish_reason="stop", usage=Usage(9, 4)),
    ]
    # The engine's side parses the call (gate_calls); the answer reads it structured.
    call = ChatCall.of([Message("user", "time?")], tools=[ToolSpec("get_time", None, {})])
    chunks = TimedStream(gate_calls(generated, call), RequestInfo("req_1", clock.perf_counter()))
    after: list[str] = []
    answer = OllamaAnswer("m", chat=True, after=lambda: after.append("done"))
    lines = [
        json.loads(line)
        for raw in answer_stream(answer_pieces(chunks), answer)
        for line in raw.splitlines()
    ]
    messages = [line["message"] for line in lines]
    assert messages[0] == {"role": "assistant", "content": ""}  # the first-chunk line
    assert messages[1] == {"role": "assistant", "content": "", "thinking": "let me see"}
    assert "".join(m["content"] for m in messages) == "Checking. "  # sent before the call
    assert messages[-2]["tool_calls"] == [
        {"function": {"index": 0, "name": "get_time", "arguments": {}}}
    ]
    assert lines[-1]["done"] and lines[-1]["eval_count"] == 4 and after == ["done"]
