"""Generated items for the three translations: a 400 with a message, never a crash
(whether the typed body refuses them or the translator does).

The OpenAPI fuzzing sees ``input``/``messages`` items only as free-form objects, so it
rarely builds one that looks like a real item with a wrong field; these strategies do.
"""

from __future__ import annotations

from typing import Any, TypeVar

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from desktop.base.errors import InvalidRequest
from desktop.server import _request_parts as request_parts
from desktop.server._protocols.anthropic import requests as ar
from desktop.server._protocols.anthropic import translate as aw
from desktop.server._protocols.ollama import requests as orq
from desktop.server._protocols.ollama import translate as ow
from desktop.server._protocols.responses import requests as rr
from desktop.server._protocols.responses import translate as rw
from tests.server import bodies

M = TypeVar("M", bound=BaseModel)
SETTINGS = settings(
    max_examples=300,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
KEYS = [
    "type",
    "role",
    "content",
    "call_id",
    "name",
    "arguments",
    "output",
    "summary",
    "text",
    "tool_use_id",
    "input",
    "id",
    "thinking",
    "tool_calls",
    "images",
    "tool_name",
    "function",
    "input_schema",
    "parameters",
    "description",
]
TYPES = [
    "message",
    "function_call",
    "function_call_output",
    "reasoning",
    "text",
    "tool_use",
    "tool_result",
    "thinking",
    "redacted_thinking",
    "image",
    "function",
    "input_text",
    "output_text",
    "custom",
]
ROLES = ["user", "assistant", "system", "developer", "tool"]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False),
    st.sampled_from(["", "x", "{}", "[1]", '{"a": 1}', *TYPES, *ROLES]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(KEYS), inner, max_size=4)
    ),
    max_leaves=8,
)
items = st.dictionaries(st.sampled_from(KEYS), values, max_size=6).flatmap(
    lambda d: st.fixed_dictionaries(
        {"type": st.sampled_from(TYPES), "role": st.sampled_from(ROLES)}
    ).map(lambda extra: {**extra, **d})
)


def _survives(call: Any) -> None:
    try:
        call()
    except InvalidRequest as exc:
        assert exc.message and exc.param  # says what is wrong, and where


def _parsed(model: type[M], body: dict[str, Any]) -> M | None:
    """``body`` as the route reads it, or None where it is refused (a 400 with a
    message and a param, as ``_survives`` checks)."""
    try:
        return bodies.parsed(model, body)
    except InvalidRequest as exc:
        assert exc.message and exc.param
        return None


@SETTINGS
@given(st.lists(items, min_size=1, max_size=3), values)
def test_responses_items_and_tools(batch: list[dict[str, Any]], choice: Any) -> None:
    _survives(lambda: bodies.responses_messages(None, batch))
    fields = {"model": "m", "input": "x", "tools": batch}
    if isinstance(choice, (dict, str)):
        fields["tool_choice"] = choice
    req = _parsed(rr.ResponsesRequest, fields)
    if req is not None:
        _survives(
            lambda: rw.generation_params(req, request_parts.Limits(), rw.tools_for_engine(req))
        )


@SETTINGS
@given(st.lists(items, min_size=1, max_size=3), values, values)
def test_anthropic_blocks_tools_thinking_and_output(
    batch: list[dict[str, Any]], choice: Any, extra: Any
) -> None:
    messages = [{"role": b.get("role"), "content": b.get("content", [b])} for b in batch]
    _survives(lambda: bodies.anthropic_messages(batch, messages))
    fields: dict[str, Any] = {
        "model": "m",
        "max_tokens": 5,
        "tools": batch,
        "messages": [{"role": "user", "content": "x"}],
    }
    for name in ("tool_choice", "thinking", "output_config"):
        if isinstance(extra, dict):
            fields[name] = extra
    if isinstance(choice, dict):
        fields["tool_choice"] = choice
    req = _parsed(ar.MessagesRequest, fields)
    if req is not None:
        _survives(
            lambda: aw.generation_params(req, request_parts.Limits(), aw.tools_for_engine(req))
        )
        _survives(lambda: aw.template_kwargs(req))


@SETTINGS
@given(
    st.lists(items, min_size=1, max_size=3),
    st.dictionaries(st.text(max_size=12), values, max_size=4),
    values,
)
def test_ollama_messages_tools_options_and_keep_alive(
    batch: list[dict[str, Any]], options: dict[str, Any], keep_alive: Any
) -> None:
    _survives(lambda: bodies.ollama_messages(batch))
    _survives(lambda: bodies.ollama_tools(batch))
    req = orq.ChatRequest.model_validate({"model": "m", "options": options})
    _survives(lambda: ow.generation_params(req, request_parts.Limits()))
    if isinstance(keep_alive, (str, int, float)) and not isinstance(keep_alive, bool):
        _survives(lambda: ow.keep_alive_s(keep_alive))
