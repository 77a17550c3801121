"""The real Gemma 3 270M model: real tokenizer, determinism, and parity with llama-cpp-python."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import llama_cpp
import pytest

from desktop.engine.llama import LlamaEngine, LoadOptions
from desktop.engine.types import GenerationParams, Message

pytestmark = pytest.mark.slow
PROMPT = "The capital of France is"


@pytest.fixture(scope="module")
def gemma(gemma_path: Path) -> LlamaEngine:
    return LlamaEngine(gemma_path, LoadOptions(context_length=1024), model_id="gemma")


def test_greedy_completion_is_deterministic_and_sensible(gemma: LlamaEngine) -> None:
    params = GenerationParams(max_tokens=8, temperature=0.0)
    first = "".join(c.text for c in gemma.stream_completion(PROMPT, params))
    second = "".join(c.text for c in gemma.stream_completion(PROMPT, params))
    assert first == second
    assert len(first.split()) >= 3  # real words from the real tokenizer


def test_architecture_template_used_for_chat(gemma: LlamaEngine) -> None:
    assert gemma.template().source in {"gguf", "architecture:gemma3"}
    prompt = gemma.render([Message("user", "Hi")])
    assert "<start_of_turn>user" in prompt and prompt.endswith("<start_of_turn>model\n")
    chunks = list(gemma.stream_chat([Message("user", "Hi")], GenerationParams(max_tokens=5)))
    assert chunks[-1].usage.completion_tokens <= 5


def test_edgedesk_run_raw_matches_llama_cpp_python(gemma_path: Path, tmp_path: Path) -> None:
    direct = llama_cpp.Llama(str(gemma_path), n_ctx=1024, verbose=False)
    expected = direct.create_completion(PROMPT, max_tokens=24, temperature=0.0)["choices"][0]["text"]
    direct.close()
    env = {**os.environ, "EDGEDESK_HOME": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-m", "desktop", "run", str(gemma_path), PROMPT, "--raw",
         "--max-tokens", "24", "--temperature", "0", "--ctx", "1024"],
        capture_output=True, text=True, env=env, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout == expected + "\n"
