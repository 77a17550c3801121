"""Template resolution order and the streaming <think> splitter (pure functions)."""

from __future__ import annotations

import pytest

from desktop.engine.templates import ThinkSplitter, render_chat, resolve_template
from desktop.engine.types import Message
from desktop.errors import TemplateMissing


def test_gguf_template_wins_then_catalog_then_architecture() -> None:
    common = {"model_name": "m", "architecture": "glm4"}
    assert resolve_template(gguf_template="G", catalog_template="C", **common).source == "gguf"
    assert resolve_template(gguf_template=None, catalog_template="C", **common).source == "catalog"
    fallback = resolve_template(gguf_template="  ", catalog_template=None, **common)
    assert fallback.source == "architecture:glm4"
    assert render_chat(fallback, [Message("user", "你好")]) == "[gMASK]<sop><|user|>\n你好<|assistant|>\n"


def test_unknown_architecture_without_template_is_refused_never_guessed() -> None:
    with pytest.raises(TemplateMissing, match="my-model has no chat template.*'llama'"):
        resolve_template(model_name="my-model", architecture="llama", gguf_template=None,
                         catalog_template=None)


def test_stop_strings_come_from_the_format_in_use() -> None:
    glm = resolve_template(model_name="m", architecture="chatglm", gguf_template=None,
                           catalog_template=None, eos_token="<|endoftext|>")
    assert "<|user|>" in glm.stop_strings() and "<end_of_turn>" not in glm.stop_strings()


def _split(pieces: list[str], **kwargs: bool) -> tuple[str, str]:
    splitter = ThinkSplitter(enabled=True, **kwargs)
    content, reasoning = "", ""
    for piece in pieces:
        c, r = splitter.feed(piece)
        content, reasoning = content + c, reasoning + r
    c, r = splitter.flush()
    return content + c, reasoning + r


def test_think_block_split_even_when_tags_are_cut_across_tokens() -> None:
    pieces = ["<th", "ink>", "let me ", "think</", "thi", "nk>", "The answer", " is 4."]
    assert _split(pieces) == ("The answer is 4.", "let me think")


def test_prompt_that_opened_think_starts_in_reasoning() -> None:
    assert _split(["plan</think>", "done"], start_in_reasoning=True) == ("done", "plan")


def test_unclosed_partial_tag_is_released_at_the_end() -> None:
    assert _split(["a <thi"]) == ("a <thi", "")


def test_disabled_splitter_passes_text_through() -> None:
    splitter = ThinkSplitter(enabled=False)
    assert splitter.feed("<think>x</think>y") == ("<think>x</think>y", "")


def test_gemma_format_folds_the_system_prompt_into_the_first_user_turn() -> None:
    gemma = resolve_template(model_name="g", architecture="gemma3", gguf_template=None,
                             catalog_template=None, bos_token="<bos>")
    prompt = render_chat(gemma, [Message("system", "Be brief."), Message("user", "Hi"),
                                 Message("assistant", "Hello"), Message("user", "Bye")])
    assert prompt == ("<bos><start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n"
                      "<start_of_turn>model\nHello<end_of_turn>\n"
                      "<start_of_turn>user\nBye<end_of_turn>\n<start_of_turn>model\n")
