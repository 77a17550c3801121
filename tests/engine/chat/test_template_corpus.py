"""Real GLM and Kimi chat templates render byte for byte as Hugging Face renders them.

The templates are llama.cpp's copies (tests/fixtures/templates/README.md); the reference
is tests/fixtures/hf_reference.py. EdgeDesk gets the conversation as the OpenAI API
delivers it (engine ``Message`` values, arguments as JSON text); the reference gets it
as a transformers user writes it (arguments as objects). Equal bytes mean both the
sandbox and the per-family message mapping are faithful.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from desktop.engine._prompting.templates import ResolvedTemplate, render_chat
from desktop.engine._types import Message, ToolCall
from tests.fixtures import hf_reference

pytestmark = pytest.mark.fast

TEMPLATES = Path(__file__).parents[2] / "fixtures" / "templates"
ROOT = Path(__file__).parents[3]

WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city — in °C",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"],
        },
    },
}
ARGS = {"city": "東京", "days": 2, "zip": "100"}  # "100" must stay a string


def _edgedesk_conversation(call_id: str) -> list[Message]:
    call = ToolCall(call_id, "get_weather", json.dumps(ARGS, ensure_ascii=False))
    return [
        Message("system", "You are terse."),
        Message("user", "Weather in Tokyo?"),
        Message("assistant", "", tool_calls=(call,), reasoning="Need the forecast."),
        Message("tool", '{"temp": 21}', tool_call_id=call_id),
        Message("assistant", "21 °C, sunny."),
        Message("user", "And tomorrow?"),
    ]


def _hf_conversation(call_id: str) -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Weather in Tokyo?"},
        {
            "role": "assistant",
            "content": "",
            "reasoning_content": "Need the forecast.",
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": dict(ARGS)},
                }
            ],
        },
        {"role": "tool", "content": '{"temp": 21}', "tool_call_id": call_id},
        {"role": "assistant", "content": "21 °C, sunny."},
        {"role": "user", "content": "And tomorrow?"},
    ]


# name, call id the model family writes, whether the template mutates lists
CORPUS = [
    ("GLM-4.6", "call_0a1b", False),
    ("GLM-4.7-Flash", "call_0a1b", False),
    ("Kimi-K2-Instruct", "functions.get_weather:0", True),
    ("Kimi-K2-Thinking", "functions.get_weather:0", True),
    ("moonshotai-Kimi-K2", "functions.get_weather:0", False),
]


def _template(name: str) -> ResolvedTemplate:
    return ResolvedTemplate("gguf", (TEMPLATES / f"{name}.jinja").read_text("utf-8"), "", "", name)


@pytest.mark.parametrize(("name", "call_id", "mutable"), CORPUS)
@pytest.mark.parametrize("kwargs", [{}, {"enable_thinking": False}])
def test_real_template_matches_the_reference_byte_for_byte(
    name: str, call_id: str, mutable: bool, kwargs: dict[str, Any]
) -> None:
    template = _template(name)
    ours = render_chat(
        template, _edgedesk_conversation(call_id), tools=[WEATHER_TOOL], extra=kwargs
    )
    reference = hf_reference.render(
        template.text, _hf_conversation(call_id), tools=[WEATHER_TOOL], mutable=mutable, **kwargs
    )
    assert ours == reference
    # What a user would miss if the mapping were wrong: the call and its result are there.
    assert "東京" in ours and '{"temp": 21}' in ours


def test_glm_templates_show_string_arguments_as_written_and_numbers_as_json() -> None:
    prompt = render_chat(_template("GLM-4.6"), _edgedesk_conversation("c1"), tools=[WEATHER_TOOL])
    assert "<arg_key>days</arg_key>\n<arg_value>2</arg_value>" in prompt
    assert "<arg_key>zip</arg_key>\n<arg_value>100</arg_value>" in prompt


def test_kimi_call_ids_reach_the_prompt_unchanged() -> None:
    prompt = render_chat(
        _template("moonshotai-Kimi-K2"),
        _edgedesk_conversation("functions.get_weather:0"),
        tools=[WEATHER_TOOL],
    )
    assert "<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>" in prompt
    assert "## Return of functions.get_weather:0" in prompt


def test_thinking_switch_reaches_glm_templates() -> None:
    conversation = [Message("user", "hi")]
    on = render_chat(_template("GLM-4.6"), conversation)
    off = render_chat(_template("GLM-4.6"), conversation, extra={"enable_thinking": False})
    assert on.endswith("<|assistant|>") and off.endswith("<|assistant|>\n<think></think>")
    assert "/nothink" in off and "/nothink" not in on
    flash_off = render_chat(
        _template("GLM-4.7-Flash"), conversation, extra={"enable_thinking": False}
    )
    assert flash_off.endswith("<|assistant|></think>")


# GLM-4-0414 / GLM-Z1's template (THUDM/GLM-Z1-9B-0414 tokenizer_config.json; its tool
# turns are what matter here): calls as `metadata` turns, results as `observation`.
GLM_Z1 = """[gMASK]<sop>
{%- for msg in messages %}
    {%- if msg.role == 'system' %}
<|system|>
{{ msg.content }}
    {%- endif %}
{%- endfor %}
{%- for message in messages if message.role != 'system' %}
    {%- set role = message['role'] %}
    {%- set content = message['content'] %}
    {%- set visible = content.split('</think>')[-1].strip() %}
    {%- set meta = message.get("metadata", "") %}
    {%- if role == 'user' %}
<|user|>
{{ visible }}
    {%- elif role == 'assistant' and not meta %}
<|assistant|>
{{ visible }}
    {%- elif role == 'assistant' and meta %}
<|assistant|>{{ meta }}
{{ visible }}
    {%- elif role == 'observation' %}
<|observation|>
{{ visible }}
    {%- endif %}
{%- endfor %}
{% if add_generation_prompt %}<|assistant|>
<think>{% endif %}"""


def test_glm_z1_sees_openai_tool_history_in_its_own_shape() -> None:
    template = ResolvedTemplate("gguf", GLM_Z1, "", "", "glm-z1")
    prompt = render_chat(template, _edgedesk_conversation("call_1"), tools=[WEATHER_TOOL])
    assert (
        '<|assistant|>get_weather\n{"city": "東京", "days": 2, "zip": "100"}'
        '<|observation|>\n{"temp": 21}'
    ) in prompt


def _catalog_template(model_id: str) -> str:
    data = tomllib.loads((ROOT / "models.toml").read_text("utf-8"))
    return next(m["chat_template"] for m in data["model"] if m["id"] == model_id)


def test_glm_edge_catalog_template_is_the_published_one() -> None:
    # THUDM/glm-edge-*-chat tokenizer_config.json, as llama.cpp's test-chat-template.cpp
    # records it ("GLMEdge"): no newline after the final <|assistant|>.
    published = (
        "{% for item in messages %}{% if item['role'] == 'system' %}<|system|>\n"
        "{{ item['content'] }}{% elif item['role'] == 'user' %}<|user|>\n"
        "{{ item['content'] }}{% elif item['role'] == 'assistant' %}<|assistant|>\n"
        "{{ item['content'] }}{% endif %}{% endfor %}<|assistant|>"
    )
    conversation = [
        Message("system", "Be brief."),
        Message("user", "Hello"),
        Message("assistant", "Hi there"),
        Message("user", "Who are you"),
    ]
    for model_id in ("glm-edge-1.5b", "glm-edge-4b"):
        template = ResolvedTemplate("catalog", _catalog_template(model_id), "", "", model_id)
        ours = render_chat(template, conversation)
        assert ours == hf_reference.render(
            published, [{"role": m.role, "content": m.content} for m in conversation]
        )
        assert ours.endswith("Who are you<|assistant|>")


def test_moonlight_catalog_template_uses_the_published_default_system_prompt() -> None:
    template = ResolvedTemplate(
        "catalog", _catalog_template("moonlight-16b-a3b"), "", "", "moonlight"
    )
    prompt = render_chat(template, [Message("user", "Is 123 a prime?")])
    assert prompt == (
        "<|im_system|>system<|im_middle|>You are a helpful assistant<|im_end|>"
        "<|im_user|>user<|im_middle|>Is 123 a prime?<|im_end|>"
        "<|im_assistant|>assistant<|im_middle|>"
    )


def test_glm4_9b_chat_style_metadata_gets_the_same_mapping() -> None:
    # glm-4-9b-chat's turns, as llama.cpp's test-chat-template.cpp records its template.
    text = (
        "[gMASK]<sop>{% for item in messages %}{% if item['content'] %}"
        "<|{{ item['role'] }}|>{{ item['metadata'] }}\n{{ item['content'] }}{% endif %}"
        "{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
    )
    template = ResolvedTemplate("gguf", text, "", "", "glm-4-9b-chat")
    prompt = render_chat(template, _edgedesk_conversation("call_1"))
    assert (
        '<|assistant|>get_weather\n{"city": "東京", "days": 2, "zip": "100"}'
        '<|observation|>\n{"temp": 21}'
    ) in prompt
