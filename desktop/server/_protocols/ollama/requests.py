"""Ollama's ``/api/*`` request bodies (pydantic models).

Lenient where Ollama is: unknown fields are ignored, ``content: null`` reads as empty,
an empty ``suffix`` is none. Strict where it protects: a known field of the wrong type
is a 400 naming where it is (``messages.0.tool_calls.1.function.name``). ``options``
stays an open map: each key is checked (and unknown ones named) by the translator.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

# Option values are JSON scalars or lists, checked one key at a time (``translate``).
Options = dict[str, object]


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class FunctionCall(_Lenient):
    """A call's function: its name and arguments (an object, or JSON text of one)."""

    name: str = Field(min_length=1)
    # The arguments as the model wrote them: any JSON object (or its text).
    arguments: dict[str, object] | str | None = None


class ToolCallIn(_Lenient):
    """A tool call in an assistant message sent back by the client."""

    function: FunctionCall


class ChatMessage(_Lenient):
    """One message of ``/api/chat`` (its role is checked by the translator)."""

    role: str
    content: str | None = None
    # Base64 pictures: checked (each decoded, its size bounded) by ``translate.pictures``,
    # whose 400 says what a picture must be.
    images: object = None
    tool_calls: list[ToolCallIn] | None = None
    thinking: str | None = None
    tool_name: str | None = None
    name: str | None = None


class FunctionDef(_Lenient):
    """A function tool's definition, checked field by field where it is used."""

    name: object = None
    description: object = None
    parameters: object = None


class Tool(_Lenient):
    """A tool in OpenAI's shape (only function tools exist in Ollama)."""

    type: object = "function"
    function: FunctionDef | None = None


class Generation(_Lenient):
    """What ``/api/chat`` and ``/api/generate`` share: model, format, options, think."""

    model: str = Field(min_length=1)
    # "json", or a JSON Schema the client supplies, given to the grammar as it came.
    format: str | dict[str, object] | None = None
    options: Options | None = None
    stream: bool = True
    keep_alive: str | float | None = None
    think: bool | str | None = None


class ChatRequest(Generation):
    """``POST /api/chat``."""

    messages: list[ChatMessage] = Field(default_factory=list)
    tools: list[Tool] | None = None


class GenerateRequest(Generation):
    """``POST /api/generate``."""

    prompt: str = ""
    suffix: str | None = None
    system: str | None = None
    template: str | None = None
    context: list[int] | None = None
    raw: bool = False
    images: list[str] | None = None

    @field_validator("suffix")
    @classmethod
    def _no_empty_suffix(cls, value: str | None) -> str | None:
        # Ollama fills in the middle only for a non-empty suffix: a client that sends the
        # zero value (a Go struct without omitempty) asks for a plain completion.
        return value or None


class EmbedRequest(_Lenient):
    """``POST /api/embed``."""

    model: str = Field(min_length=1)
    input: str | list[str]
    truncate: bool = True
    options: Options | None = None
    keep_alive: str | float | None = None
    dimensions: int | None = None


class EmbeddingsRequest(_Lenient):
    """``POST /api/embeddings`` (the older, one-text form)."""

    model: str = Field(min_length=1)
    prompt: str = ""
    options: Options | None = None
    keep_alive: str | float | None = None


class ShowRequest(_Lenient):
    """``POST /api/show`` (``name`` is the older spelling of ``model``)."""

    model: str | None = None
    name: str | None = None
    verbose: bool | None = None
