"""The Responses API's request body and its ``input`` items (pydantic models).

Lenient where OpenAI's clients are: an item or part of a type we do not read is kept
(``OtherItem``, ``OtherPart``) so the translator refuses it by name; a ``message`` item
may leave out its ``type``. Strict where it protects: a known field of the wrong type is a
400 naming where it is (``input.2.call_id``). Items keep every field they came with
(``extra="allow"``): they are stored and given back as sent (``input_items``,
``previous_response_id``), and ``dumped`` turns them back into exactly that JSON.
Tools are open records too: hosted ones carry fields of their own, and each is echoed
in the response object as it came.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, TypeAdapter, ValidationError

from desktop.base.errors import InvalidRequest

TEXT_PARTS = ("input_text", "output_text", "text", "summary_text", "reasoning_text")


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Kept(BaseModel):
    # Stored and given back as the client sent it: every field, known or not.
    model_config = ConfigDict(extra="allow")


# ---------------------------------------------------------------- content parts


class TextPart(_Kept):
    """A part of text (``input_text``, ``output_text``, a reasoning summary's…)."""

    type: Literal["input_text", "output_text", "text", "summary_text", "reasoning_text"]
    text: str


class RefusalPart(_Kept):
    """An earlier answer's refusal, read as its text."""

    type: Literal["refusal"]
    refusal: str


class ImagePart(_Kept):
    """``input_image``: ``image_url`` a data URL (or bare base64); ``file_id`` is refused."""

    type: Literal["input_image"]
    image_url: object = None  # checked (and its size bounded) by ``image_parts``
    file_id: object = None
    detail: object = None


class OtherPart(_Kept):
    """A part of a type this server does not read (refused by name)."""

    type: object = None


def _tag(value: object, default: object = None) -> object:
    if isinstance(value, dict):
        return value.get("type", default)
    return getattr(value, "type", None)


def _part_tag(value: object) -> str:
    kind = _tag(value)
    if kind in TEXT_PARTS:
        return "part[text]"
    return f"part[{kind}]" if kind in ("refusal", "input_image") else "part[other]"


# Member tags hold "[": the error handler leaves them out of the path it names.
Part = Annotated[
    Annotated[TextPart, Tag("part[text]")]
    | Annotated[RefusalPart, Tag("part[refusal]")]
    | Annotated[ImagePart, Tag("part[input_image]")]
    | Annotated[OtherPart, Tag("part[other]")],
    Discriminator(_part_tag),
]


def _str_or_parts(value: object) -> str:
    return "str" if isinstance(value, str) else "list[parts]"


# A string, or parts: only the branch the value's kind picks is tried, so an error in a
# part names the part, not "content should be a valid string".
Content = Annotated[
    Annotated[str, Tag("str")] | Annotated[list[Part], Tag("list[parts]")],
    Discriminator(_str_or_parts),
]

# ---------------------------------------------------------------- input items


class MessageItem(_Kept):
    """A message (``type`` may be left out); its role is checked by the translator."""

    type: Literal["message"] = "message"
    role: str
    content: Content


class FunctionCallItem(_Kept):
    """A function call the model made (``namespace``: Codex's call of a namespaced tool)."""

    type: Literal["function_call"]
    call_id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    arguments: object = "{}"  # JSON text of an object, checked by the translator
    namespace: str | None = None


class FunctionCallOutputItem(_Kept):
    """A function call's result: text, or parts that may hold pictures."""

    type: Literal["function_call_output"]
    call_id: str = Field(min_length=1)
    output: Content = ""


class McpCallItem(_Kept):
    """A hosted MCP call EdgeDesk ran, with its output (or its error)."""

    type: Literal["mcp_call"]
    id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    arguments: object = "{}"
    output: object = None
    error: object = None


class McpListToolsItem(_Kept):
    """The tools a hosted MCP server offered: not a turn of the conversation."""

    type: Literal["mcp_list_tools"]


class ReasoningItem(_Kept):
    """An earlier answer's reasoning: its ``content``, else its ``summary``."""

    type: Literal["reasoning"]
    content: Content | None = None
    summary: Content | None = None


class OtherItem(_Kept):
    """An item of a type this server does not read (refused by name)."""

    type: object = None


_ITEMS = ("message", "function_call", "function_call_output", "mcp_call", "mcp_list_tools")


def _item_tag(value: object) -> str:
    kind = _tag(value, "message" if isinstance(value, dict) and "role" in value else None)
    return f"item[{kind}]" if kind in (*_ITEMS, "reasoning") else "item[other]"


InputItem = Annotated[
    Annotated[MessageItem, Tag("item[message]")]
    | Annotated[FunctionCallItem, Tag("item[function_call]")]
    | Annotated[FunctionCallOutputItem, Tag("item[function_call_output]")]
    | Annotated[McpCallItem, Tag("item[mcp_call]")]
    | Annotated[McpListToolsItem, Tag("item[mcp_list_tools]")]
    | Annotated[ReasoningItem, Tag("item[reasoning]")]
    | Annotated[OtherItem, Tag("item[other]")],
    Discriminator(_item_tag),
]


def _str_or_items(value: object) -> str:
    return "str" if isinstance(value, str) else "list[items]"


# A string (one user message), or items: an error in an item names the item.
Input = Annotated[
    Annotated[str, Tag("str")] | Annotated[list[InputItem], Tag("list[items]")],
    Discriminator(_str_or_items),
]
_ITEM_LIST: TypeAdapter[list[InputItem]] = TypeAdapter(list[InputItem])


def items_of(stored: Sequence[object]) -> list[InputItem]:
    """Stored items (a previous response's input and output, as JSON) as typed items; a
    400 naming ``previous_response_id`` if one is no longer readable."""
    try:
        return _ITEM_LIST.validate_python(list(stored))
    except ValidationError as exc:
        where = ".".join(str(p) for p in exc.errors()[0]["loc"] if "[" not in str(p))
        raise InvalidRequest(
            f"the previous response's item {where} cannot be read ({exc.errors()[0]['msg']}); "
            "send the conversation in input",
            param="previous_response_id",
        ) from None


def dumped(value: BaseModel) -> dict[str, Any]:
    """An item, tool or choice as the JSON it came as (every field it was sent with).

    ``Any``: JSON values of fields this server never reads are given back unchanged.
    """
    return value.model_dump(mode="json", by_alias=True, exclude_unset=True)


# ---------------------------------------------------------------- tools and options


class Tool(_Kept):
    """A tool: a ``function`` (its fields checked where it is used), a ``namespace`` of
    Codex's, or a hosted one (``web_search``, ``mcp``…: left out, or run for ``mcp``)."""

    type: object = None
    name: object = None
    description: object = None
    parameters: object = None
    # ``namespace``: its tools; ``mcp``: the server.
    tools: object = None
    server_label: object = None
    server_url: object = None


class ToolChoiceObject(_Kept):
    """``tool_choice`` naming a tool (``{"type": "function", "name": …}``, an ``mcp``
    server's label, a hosted tool's type); checked by the translator."""

    type: object = None
    name: object = None
    namespace: object = None
    server_label: object = None


ToolChoice = Literal["none", "auto", "required"] | ToolChoiceObject | None


class TextFormat(_Lenient):
    """``text.format``: plain text, any JSON object, or JSON matching a schema."""

    type: Literal["text", "json_object", "json_schema"] = "text"
    name: str | None = None
    description: str | None = None
    # The JSON Schema the client supplies, given to the grammar (and echoed) as it came.
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    strict: bool | None = None


class TextConfig(_Lenient):
    """``text``: the output format (``verbosity`` is accepted and ignored)."""

    format: TextFormat | None = None
    verbosity: str | None = None


class ReasoningConfig(_Lenient):
    """``reasoning``: whether a thinking model thinks (``effort``); summaries are not made."""

    effort: Literal["none", "minimal", "low", "medium", "high", "xhigh"] | None = None
    summary: str | None = None
    generate_summary: str | None = None


class ResponsesRequest(_Lenient):
    """``POST /v1/responses``; items of ``input`` are read in ``translate.to_messages``."""

    model: str = Field(min_length=1)
    input: Input
    instructions: str | None = None
    tools: list[Tool] | None = None
    tool_choice: ToolChoice = None
    max_output_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    text: TextConfig | None = None
    reasoning: ReasoningConfig | None = None
    store: bool | None = None
    previous_response_id: str | None = Field(default=None, min_length=1, max_length=200)
    stream: bool = False
    metadata: dict[str, str] | None = None
    parallel_tool_calls: bool | None = None
    user: str | None = None
    include: list[str] | None = None
    background: bool | None = None
    conversation: object = None  # refused by name, as are prompt and the two below
    prompt: object = None
    truncation: Literal["auto", "disabled"] | None = None
    top_logprobs: int | None = Field(default=None, ge=0, le=20)
    max_tool_calls: int | None = Field(default=None, ge=1)
