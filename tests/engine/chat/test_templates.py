"""Template resolution order and the streaming <think> splitter (pure functions)."""

from __future__ import annotations

import pytest

from desktop.base.errors import InvalidRequest, TemplateFailed, TemplateMissing
from desktop.engine._prompting.templates import (
    ResolvedTemplate,
    ThinkSplitter,
    render_chat,
    resolve_template,
)
from desktop.engine._types import Message

pytestmark = pytest.mark.fast


def test_gguf_template_wins_then_catalog_then_architecture() -> None:
    common = {"model_name": "m", "architecture": "glm4"}
    assert resolve_template(gguf_template="G", catalog_template="C", **common).source == "gguf"
    assert resolve_template(gguf_template=None, catalog_template="C", **common).source == "catalog"
    fallback = resolve_template(gguf_template="  ", catalog_template=None, **common)
    assert fallback.source == "architecture:glm4"
    assert (
        render_chat(fallback, [Message("user", "你好")])
        == "[gMASK]<sop><|user|>\n你好<|assistant|>\n"
    )


def test_unknown_architecture_without_template_is_refused_never_guessed() -> None:
    with pytest.raises(TemplateMissing, match="my-model has no chat template.*'llama'"):
        resolve_template(
            model_name="my-model", architecture="llama", gguf_template=None, catalog_template=None
        )


def test_stop_strings_come_from_the_format_in_use() -> None:
    glm = resolve_template(
        model_name="m",
        architecture="chatglm",
        gguf_template=None,
        catalog_template=None,
        eos_token="<|endoftext|>",
    )
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
    gemma = resolve_template(
        model_name="g",
        architecture="gemma3",
        gguf_template=None,
        catalog_template=None,
        bos_token="<bos>",
    )
    prompt = render_chat(
        gemma,
        [
            Message("system", "Be brief."),
            Message("user", "Hi"),
            Message("assistant", "Hello"),
            Message("user", "Bye"),
        ],
    )
    assert prompt == (
        "<bos><start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n"
        "<start_of_turn>model\nHello<end_of_turn>\n"
        "<start_of_turn>user\nBye<end_of_turn>\n<start_of_turn>model\n"
    )


def test_glm_answer_after_think_does_not_open_with_blank_lines() -> None:
    assert _split(["<think>plan</think>", "\n", "\nThe answer"]) == ("The answer", "plan")
    assert _split(["</think>\n\n", "Hi\n\nthere"], start_in_reasoning=True) == ("Hi\n\nthere", "")


def _custom(text: str) -> ResolvedTemplate:
    return ResolvedTemplate("catalog", text, "", "", "evil-model")


@pytest.mark.parametrize(
    "text",
    [
        "{{ ''.__class__ }}",
        "{{ ''.__class__.__mro__[1].__subclasses__() }}",
        "{{ cycler.__init__.__globals__ }}",
        "{{ joiner.__init__.__globals__.os }}",
        "{{ namespace.__init__ }}",
        "{{ raise_exception.__globals__ }}",
        "{{ lipsum.__globals__['os'].popen('id').read() }}",
        "{{ messages[0].__class__.__base__ }}",
        "{{ strftime_now.__code__ }}",
        "{% set x = range.__globals__ %}{{ x }}",
        "{{ self._TemplateReference__context }}",
    ],
)
def test_hostile_templates_are_refused_with_the_template_named(text: str) -> None:
    with pytest.raises(TemplateFailed, match="chat template of evil-model .*models.toml") as e:
        render_chat(_custom(text), [Message("user", "hi")])
    assert e.value.http_status == 422
    assert "not allowed" in str(e.value) or "unsafe" in str(e.value) or "undefined" in str(e.value)


def test_list_and_dict_mutation_that_real_templates_use_is_allowed() -> None:
    text = (
        "{% set ns = namespace(ids=[]) %}{% set d = {} %}"
        "{% for m in messages %}{% set _ = ns.ids.append(m['role']) %}"
        "{% set _ = d.update({m['role']: m['content']}) %}{% endfor %}"
        "{{ ns.ids.pop(0) }}|{{ ns.ids | join(',') }}|{{ d | tojson(sort_keys=True) }}"
        "{% for i in range(3) %}{% if i == 1 %}{% break %}{% endif %}{{ i }}{% endfor %}"
    )
    out = render_chat(_custom(text), [Message("user", "a"), Message("assistant", "b")])
    assert out == 'user|assistant|{"assistant": "b", "user": "a"}0'


def test_tojson_takes_huggingface_options() -> None:
    text = (
        "{{ messages[0] | tojson(ensure_ascii=True) }}|"
        "{{ messages[0] | tojson(separators=(',', ':'), sort_keys=True) }}|"
        "{{ {'a': 1} | tojson(indent=2) }}"
    )
    out = render_chat(_custom(text), [Message("user", "é<b>")])
    assert out == (
        '{"role": "user", "content": "\\u00e9<b>"}|{"content":"é<b>","role":"user"}|{\n  "a": 1\n}'
    )


@pytest.mark.parametrize(
    ("text", "cause"),
    [
        ("{{ messages[0]['content'] + 1 }}", "TypeError"),
        ("{{ tojson(1, 2, 3, 4, 5, 6) }}", "UndefinedError"),
        ("{{ messages | tojson(no_such_option=True) }}", "TypeError"),
        ("{% for %}", "TemplateSyntaxError"),
        ("{{ messages[7]['content'] | upper }}", "UndefinedError"),
    ],
)
def test_any_template_failure_is_a_4xx_naming_template_and_cause(text: str, cause: str) -> None:
    with pytest.raises(TemplateFailed, match=f"evil-model \\(from models.toml\\).*{cause}"):
        render_chat(_custom(text), [Message("user", "hi")])


def test_template_raise_exception_is_the_callers_400() -> None:
    text = "{{ raise_exception('Conversation roles must alternate') }}"
    with pytest.raises(InvalidRequest, match="evil-model.*rejected.*roles must alternate") as e:
        render_chat(_custom(text), [Message("user", "hi")])
    assert e.value.http_status == 400


# Gemma 3's own GGUF template, shortened: the first system message opens the first user
# turn, and every later turn must alternate user/model (its raise_exception).
STRICT = (
    "{{ bos_token }}{%- if messages[0]['role'] == 'system' -%}"
    "{%- set prefix = messages[0]['content'] + '\n\n' -%}{%- set loop_messages = messages[1:] -%}"
    "{%- else -%}{%- set prefix = '' -%}{%- set loop_messages = messages -%}{%- endif -%}"
    "{%- for m in loop_messages -%}"
    "{%- if (m['role'] == 'user') != (loop.index0 % 2 == 0) -%}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}"
    "{%- endif -%}"
    "<start_of_turn>{{ 'model' if m['role'] == 'assistant' else m['role'] }}\n"
    "{{ (prefix if loop.first else '') ~ m['content'] }}<end_of_turn>{{ '\\n' }}{%- endfor -%}"
    "{%- if add_generation_prompt -%}<start_of_turn>model\n{% endif -%}"
)
CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
# Renders only a first system message and skips the rest without a word.
SKIPS = (
    "{% for m in messages %}{% if m['role'] != 'system' or loop.first %}"
    "[{{ m['role'] }}]{{ m['content'] }}{% endif %}{% endfor %}[assistant]"
)
# Claude Code's shape: a reminder as a system message in the middle of the conversation.
AGENT = [
    Message("system", "You are an agent."),
    Message("user", "fix the bug"),
    Message("assistant", "Looking."),
    Message("system", "<reminder>todo</reminder>"),
    Message("user", "go on"),
]


def _template(text: str) -> ResolvedTemplate:
    return ResolvedTemplate("gguf", text, "<bos>", "<eos>", "m")


def test_a_late_system_message_stays_where_the_template_can_render_it() -> None:
    prompt = render_chat(_template(CHATML), AGENT)
    assert (
        "<|im_end|>\n<|im_start|>system\n<reminder>todo</reminder><|im_end|>\n"
        "<|im_start|>user\ngo on" in prompt
    )


def test_a_late_system_message_opens_the_next_user_turn_where_roles_must_alternate() -> None:
    with pytest.raises(InvalidRequest, match="alternate"):
        render_chat(_template(STRICT), [*AGENT[:3], Message("user", "x"), Message("user", "y")])
    prompt = render_chat(_template(STRICT), AGENT)
    assert prompt == (
        "<bos><start_of_turn>user\nYou are an agent.\n\nfix the bug<end_of_turn>\n"
        "<start_of_turn>model\nLooking.<end_of_turn>\n"
        "<start_of_turn>user\n<reminder>todo</reminder>\n\ngo on<end_of_turn>\n"
        "<start_of_turn>model\n"
    )


def test_a_late_system_message_a_template_would_skip_is_folded_in() -> None:
    prompt = render_chat(_template(SKIPS), AGENT)
    assert prompt == (
        "[system]You are an agent.[user]fix the bug[assistant]Looking."
        "[user]<reminder>todo</reminder>\n\ngo on[assistant]"
    )
    trailing = render_chat(_template(SKIPS), [*AGENT[:2], Message("system", "late")])
    assert trailing == "[system]You are an agent.[user]fix the bug\n\nlate[assistant]"


def test_fold_joins_leading_system_messages_and_keeps_other_turns() -> None:
    from desktop.engine._prompting.template_messages import fold_system_turns

    folded = fold_system_turns(
        [Message("system", "a"), Message("system", "b"), *AGENT[1:3], Message("system", "c")]
    )
    assert [(m.role, m.content) for m in folded] == [
        ("system", "a\n\nb"),
        ("user", "fix the bug"),
        ("assistant", "Looking."),
        ("user", "c"),
    ]
