"""Request and response bodies of the OpenAI API subset we serve (pydantic models).

Requests ignore fields we do not know (clients send vendor extensions) but reject
known fields of the wrong type or range, so the caller hears about a mistake instead
of getting an answer to a different question. Fields we know but cannot honour are
refused in ``openai.py`` with a message that names them.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# ---------------------------------------------------------------- requests


class _Request(BaseModel):
    model_config = ConfigDict(extra="ignore")


class FunctionDef(_Request):
    """A callable function offered to the model."""

    name: str = Field(min_length=1, max_length=128)
    description: str | None = None
    parameters: dict[str, Any] | None = None  # the JSON Schema the client supplies
    strict: bool | None = None


class ToolDef(_Request):
    """One tool (only functions exist in the API)."""

    type: Literal["function"] = "function"
    function: FunctionDef


class FunctionName(_Request):
    """The function a forced ``tool_choice`` names."""

    name: str


class NamedToolChoice(_Request):
    """``tool_choice`` that forces one function."""

    type: Literal["function"] = "function"
    function: FunctionName


class FunctionCallIn(_Request):
    """A function call the assistant made earlier in the conversation."""

    name: str
    arguments: str = "{}"


class ToolCallIn(_Request):
    """A tool call in an assistant message sent back by the client."""

    id: str = ""
    type: Literal["function"] = "function"
    function: FunctionCallIn


class ImageURL(_Request):
    """``image_url`` of an image part: a ``data:`` URL (``detail`` is accepted, unused)."""

    url: str
    detail: str | None = None


class ContentPart(_Request):
    """A part of a multi-part message: text, or a picture in ``image_url``."""

    type: str
    text: str | None = None
    # An object as OpenAI sends it; a bare string as vLLM and llama-server also accept.
    image_url: ImageURL | str | None = None


class ChatMessageIn(_Request):
    """One message of the conversation the client sends."""

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[ContentPart] | None = None
    name: str | None = None
    tool_call_id: str | None = None
    tool_calls: list[ToolCallIn] | None = None
    reasoning_content: str | None = None


class JSONSchemaFormat(_Request):
    """The schema part of ``response_format: {type: json_schema}``."""

    name: str = "response"
    description: str | None = None
    # The JSON Schema the client supplies, given to the grammar as it came.
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    strict: bool | None = None


class ResponseFormat(_Request):
    """``response_format``: text, any JSON object, or JSON matching a schema."""

    type: Literal["text", "json_object", "json_schema"]
    json_schema: JSONSchemaFormat | None = None


class StreamOptions(_Request):
    """Extra streaming behaviour."""

    include_usage: bool = False


Stop = str | list[str] | None


class _Sampling(_Request):
    """Sampling fields shared by chat and text completions."""

    model: str = Field(min_length=1)
    max_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    stop: Stop = None
    seed: int | None = None
    presence_penalty: float | None = Field(default=None, ge=-2.0, le=2.0)
    frequency_penalty: float | None = Field(default=None, ge=-2.0, le=2.0)
    n: int | None = Field(default=None, ge=1, le=128)
    stream: bool = False
    stream_options: StreamOptions | None = None
    user: str | None = None


class ChatCompletionRequest(_Sampling):
    """``POST /v1/chat/completions``."""

    messages: list[ChatMessageIn] = Field(min_length=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    # Function tools are checked as ``ToolDef`` in ``translate.tools_for_engine`` (an
    # error names the tool's index); other types (hosted tools some clients send) are
    # left out, not refused: each tool is an open JSON object until then.
    tools: list[dict[str, object]] | None = None
    tool_choice: Literal["none", "auto", "required"] | NamedToolChoice | None = None
    parallel_tool_calls: bool | None = None
    response_format: ResponseFormat | None = None
    logprobs: bool | None = None
    top_logprobs: int | None = Field(default=None, ge=0, le=20)
    # Variables for the model's chat template, as vLLM and llama-server accept them
    # (e.g. {"enable_thinking": false}); and OpenAI's reasoning switch, mapped onto it.
    chat_template_kwargs: dict[str, object] | None = None
    reasoning_effort: Literal["none", "minimal", "low", "medium", "high"] | None = None


class CompletionRequest(_Sampling):
    """``POST /v1/completions``."""

    prompt: str | list[str] | list[int] | list[list[int]]
    suffix: str | None = None
    echo: bool | None = None
    best_of: int | None = Field(default=None, ge=1)
    logprobs: int | None = Field(default=None, ge=0, le=5)


class EmbeddingRequest(_Request):
    """``POST /v1/embeddings``."""

    model: str = Field(min_length=1)
    input: str | list[str] | list[int] | list[list[int]]
    encoding_format: Literal["float", "base64"] = "float"
    dimensions: int | None = Field(default=None, ge=1)
    user: str | None = None


class RerankDocument(_Request):
    """A document given as an object (Jina, Cohere); only its text is ranked."""

    text: str


class RerankRequest(_Request):
    """``POST /v1/rerank`` (the llama.cpp server / Jina / Cohere shape).

    The document count is checked in ``openai.rerank_texts`` so the error can say how
    many were sent and what the bound is.
    """

    model: str = Field(min_length=1)
    query: str = Field(min_length=1)
    documents: list[str | RerankDocument]
    top_n: int | None = Field(default=None, ge=1)
    return_documents: bool = False


# ---------------------------------------------------------------- responses


class _Response(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PromptTokensDetails(_Response):
    """How much of the prompt came from a reused KV prefix."""

    cached_tokens: int = 0


class UsageOut(_Response):
    """Token counts of one request."""

    prompt_tokens: int
    completion_tokens: int = 0
    total_tokens: int
    prompt_tokens_details: PromptTokensDetails | None = None


class FunctionCallOut(_Response):
    """A function call the model made."""

    name: str
    arguments: str


class ToolCallOut(_Response):
    """A tool call in an answer."""

    id: str
    type: Literal["function"] = "function"
    function: FunctionCallOut


class ChatMessageOut(_Response):
    """The assistant's answer."""

    role: Literal["assistant"] = "assistant"
    content: str | None
    reasoning_content: str | None = None
    tool_calls: list[ToolCallOut] | None = None


class TopLogprob(_Response):
    """One likely token at a position, with its UTF-8 bytes."""

    token: str
    logprob: float
    bytes: list[int] | None


class TokenLogprobOut(TopLogprob):
    """A sampled token's log-probability and the most likely alternatives."""

    top_logprobs: list[TopLogprob]


class ChatLogprobs(_Response):
    """``choices[].logprobs`` of a chat answer."""

    content: list[TokenLogprobOut] | None
    refusal: list[TokenLogprobOut] | None = None


class CompletionLogprobs(_Response):
    """``choices[].logprobs`` of a (legacy) text completion."""

    tokens: list[str]
    token_logprobs: list[float]
    top_logprobs: list[dict[str, float]]
    text_offset: list[int]


class ChatChoice(_Response):
    """One answer to a chat request."""

    index: int = 0
    message: ChatMessageOut
    finish_reason: str
    logprobs: ChatLogprobs | None = None


class ChatCompletion(_Response):
    """The body of a non-streamed chat answer."""

    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    choices: list[ChatChoice]
    usage: UsageOut
    system_fingerprint: str | None = None


class CompletionChoice(_Response):
    """One continuation of a text prompt."""

    index: int = 0
    text: str
    finish_reason: str
    logprobs: CompletionLogprobs | None = None


class Completion(_Response):
    """The body of a non-streamed text completion."""

    id: str
    object: Literal["text_completion"] = "text_completion"
    created: int
    model: str
    choices: list[CompletionChoice]
    usage: UsageOut
    system_fingerprint: str | None = None


class EmbeddingItem(_Response):
    """One vector (a list of floats, or base64 of little-endian float32)."""

    object: Literal["embedding"] = "embedding"
    index: int
    embedding: list[float] | str


class EmbeddingList(_Response):
    """The body of an embeddings answer."""

    object: Literal["list"] = "list"
    data: list[EmbeddingItem]
    model: str
    usage: UsageOut


class RerankUsage(_Response):
    """Tokens the reranker read (every query-document pair, as scored)."""

    prompt_tokens: int
    total_tokens: int


class RerankDocumentOut(_Response):
    """The ranked document's text (only with ``return_documents``)."""

    text: str


class RerankResult(_Response):
    """One document's place in the ranking."""

    index: int
    relevance_score: float
    document: RerankDocumentOut | None = None


class RerankResponse(_Response):
    """The body of a rerank answer: results best first."""

    id: str
    object: Literal["list"] = "list"
    model: str
    results: list[RerankResult]
    usage: RerankUsage


class EdgeDeskModelInfo(_Response):
    """EdgeDesk's own facts about a loaded local model: where llama.cpp put it."""

    placement: str  # "19/19 layers on Vulkan0 (llvmpipe)" or "CPU only"
    layers_total: int
    layers_offloaded: int
    devices: list[str]


class ModelCard(_Response):
    """One model the server can answer with (``edgedesk``: only while it is loaded)."""

    id: str
    object: Literal["model"] = "model"
    created: int = 0
    owned_by: str = "edgedesk"
    # Ollama's words: ["completion", "vision"] for a model that can see images; absent
    # for text-only models.
    capabilities: list[str] | None = None
    edgedesk: EdgeDeskModelInfo | None = None


class ModelList(_Response):
    """``GET /v1/models``."""

    object: Literal["list"] = "list"
    data: list[ModelCard]


class Health(_Response):
    """``GET /health``."""

    status: Literal["ok"] = "ok"
    busy: bool
    queue_depth: int
    loaded_models: list[str]
