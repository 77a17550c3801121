"""The Anthropic Messages API's request bodies (pydantic models).

Lenient where Anthropic's clients are: unknown fields are ignored (``cache_control``,
``citations``, ``signature``… on any block), and a content block of a type we do not
read is kept as an ``OtherBlock`` so the translator refuses it by name
(``translate.to_messages``) instead of with a bare "no such tag". Strict where it
protects: a block's known field of the wrong type is a 400 naming where it is
(``messages.0.content.1.text``). Tools stay open records (``Tool``): hosted ones
(``web_search_…``) carry fields of their own, and each is checked by its index.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Discriminator, Field, Tag

# A discriminated union's member tags show in pydantic's error locations; the error
# handler drops location parts with "[" in them (as pydantic's own union tags), so a
# block's path reads ``messages.0.content.1.text``, not ``….content.1.text.text``.
_TAGS = {
    "text": "block[text]",
    "image": "block[image]",
    "thinking": "block[thinking]",
    "redacted_thinking": "block[redacted_thinking]",
    "tool_use": "block[tool_use]",
    "mcp_tool_use": "block[tool_use]",
    "tool_result": "block[tool_result]",
    "mcp_tool_result": "block[tool_result]",
}
_OTHER = "block[other]"


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class TextBlock(_Lenient):
    """``{"type": "text", "text": …}``."""

    type: Literal["text"]
    text: str


class ImageSource(_Lenient):
    """An image block's ``source``; which kinds are read is the translator's to say."""

    type: str | None = None
    media_type: str | None = None
    data: object = None  # checked (and its size bounded) by ``image_parts``
    url: object = None


class ImageBlock(_Lenient):
    """``{"type": "image", "source": {…}}``."""

    type: Literal["image"]
    source: ImageSource = Field(default_factory=ImageSource)


class ThinkingBlock(_Lenient):
    """An earlier answer's reasoning (its ``signature`` is not checked)."""

    type: Literal["thinking"]
    thinking: str


class RedactedThinkingBlock(_Lenient):
    """Reasoning Anthropic encrypted: nothing a local model can read."""

    type: Literal["redacted_thinking"]


class ToolUseBlock(_Lenient):
    """A call the assistant made (``mcp_tool_use``: one EdgeDesk ran for it)."""

    type: Literal["tool_use", "mcp_tool_use"]
    id: str
    name: str
    # The call's arguments as the model wrote them: any JSON object.
    input: dict[str, object] = Field(default_factory=dict)


class ToolResultBlock(_Lenient):
    """A call's result (``mcp_tool_result``: of a call EdgeDesk ran)."""

    type: Literal["tool_result", "mcp_tool_result"]
    tool_use_id: str
    content: Content = Field(default_factory=list)


class OtherBlock(_Lenient):
    """A block of a type this server does not read (refused by name, with a hint)."""

    type: object = None


def _block_tag(value: object) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return _TAGS.get(kind, _OTHER) if isinstance(kind, str) else _OTHER


Block = Annotated[
    Annotated[TextBlock, Tag("block[text]")]
    | Annotated[ImageBlock, Tag("block[image]")]
    | Annotated[ThinkingBlock, Tag("block[thinking]")]
    | Annotated[RedactedThinkingBlock, Tag("block[redacted_thinking]")]
    | Annotated[ToolUseBlock, Tag("block[tool_use]")]
    | Annotated[ToolResultBlock, Tag("block[tool_result]")]
    | Annotated[OtherBlock, Tag(_OTHER)],
    Discriminator(_block_tag),
]


def _listed(value: object) -> object:
    return [{"type": "text", "text": value}] if isinstance(value, str) else value


# Content as a string is one text block: read so, an error in a block names the block
# (``messages.0.content.1.text``), not "content should be a valid string".
Content = Annotated[list[Block], BeforeValidator(_listed)]
ToolResultBlock.model_rebuild()


class InputMessage(_Lenient):
    """One turn of ``messages`` (its role is checked by the translator, which names the
    roles it takes)."""

    role: str
    content: Content


class Tool(BaseModel):
    """One tool: a client tool (no ``type``, or ``custom``) or one Anthropic defines;
    the fields of either are checked where the tool is used."""

    # Hosted tools carry fields of their own (``max_uses``, ``allowed_domains``…).
    model_config = ConfigDict(extra="allow")

    type: object = None
    name: object = None
    description: object = None
    input_schema: object = None


class ToolChoice(_Lenient):
    """``tool_choice`` (``type`` checked by the translator, which names the four)."""

    type: object = None
    name: object = None
    disable_parallel_tool_use: bool | None = None


class Thinking(_Lenient):
    """``thinking`` (``budget_tokens`` is accepted and not enforced)."""

    type: object = None
    budget_tokens: int | None = None


class McpServer(_Lenient):
    """One entry of ``mcp_servers`` (EdgeDesk runs it only when it is configured here)."""

    name: object = None
    url: object = None


class OutputFormat(_Lenient):
    """``output_config.format``: ``{"type": "json_schema", "schema": {…}}``."""

    type: object = None
    # The JSON Schema the client supplies, passed to the grammar as it came.
    schema_: object = Field(default=None, alias="schema")


class OutputConfig(_Lenient):
    """``output_config`` (``effort`` is accepted and has no local meaning)."""

    format: OutputFormat | None = None


class CountTokensRequest(_Lenient):
    """``POST /v1/messages/count_tokens``; blocks are read in ``translate.to_messages``."""

    model: str = Field(min_length=1)
    messages: list[InputMessage] = Field(min_length=1)
    system: Content | None = None
    tools: list[Tool] | None = None
    tool_choice: ToolChoice | None = None
    thinking: Thinking | None = None
    mcp_servers: list[McpServer] | None = None


class MessagesRequest(CountTokensRequest):
    """``POST /v1/messages``."""

    max_tokens: int = Field(ge=1)
    stop_sequences: list[str] | None = None
    temperature: float | None = Field(default=None, ge=0.0, le=1.0)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    top_k: int | None = Field(default=None, ge=1)
    stream: bool = False
    metadata: Metadata | None = None
    service_tier: str | None = None
    container: object = None  # refused by name: no code execution here
    output_config: OutputConfig | None = None


class Metadata(_Lenient):
    """``metadata`` (``user_id`` is accepted and not used)."""

    user_id: object = None


MessagesRequest.model_rebuild()
