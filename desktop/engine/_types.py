"""Plain values that flow in and out of the engine; no llama_cpp types leak past here."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from desktop.base.defaults import DEFAULT_PARALLEL, DEFAULT_STATE_CACHE_BYTES

Role = Literal["system", "user", "assistant", "tool"]
ModelKind = Literal["chat", "embedding", "reranker"]
CacheType = Literal["f16", "q8_0"]  # KV-cache element types the fit plans with
FinishReason = Literal["stop", "length", "tool_calls", "cancelled", "timeout"]


@dataclass(frozen=True)
class ToolCall:
    """One function call the model asked for."""

    id: str
    name: str
    arguments: str  # JSON text, exactly as OpenAI transmits it


@dataclass(frozen=True)
class ToolSpec:
    """One function the model may call, as a chat template renders it.

    Plain data (no callables): an engine call is sent as is to a worker process.
    ``parameters`` is the function's JSON Schema (a plain mapping of JSON values).
    """

    name: str
    description: str | None = None
    parameters: dict[str, Any] | None = None  # any JSON Schema a client sends
    strict: bool | None = None

    def openai(self) -> dict[str, Any]:  # JSON for templates and remotes, as OpenAI's
        """The tool as an OpenAI ``tools`` entry (what chat templates and remotes read)."""
        function: dict[str, Any] = {"name": self.name}  # JSON: the schema nests any values
        if self.description is not None:
            function["description"] = self.description
        if self.parameters is not None:
            function["parameters"] = self.parameters
        if self.strict is not None:
            function["strict"] = self.strict
        return {"type": "function", "function": function}

    @classmethod
    def from_openai(cls, tool: Mapping[str, Any]) -> ToolSpec:
        """The spec of an OpenAI ``tools`` entry (``{"type": "function", "function": …}``)."""
        function = tool["function"]
        return cls(
            name=function["name"],
            description=function.get("description"),
            parameters=function.get("parameters"),
            strict=function.get("strict"),
        )


MEDIA_MARKER = "<__media__>"  # stands for one image in Message.content (mtmd's default)


@dataclass(frozen=True)
class Image:
    """One picture attached to a message: the encoded file bytes, never decoded here.

    ``sha256`` (hex of ``data``) identifies the picture in prefix-cache keys and logs,
    so a conversation that repeats an image reuses its KV prefix.
    """

    data: bytes
    mime: str  # "image/png", "image/jpeg", ... as sniffed from the bytes
    sha256: str
    # True only from ``engine._images.load_image``: ``data`` passed its checks within the
    # engine's hard caps and ``sha256`` is its hash, so the engine does not check and
    # hash the bytes again (about 2 ms a 3 MiB PNG). Anything else is checked there.
    checked: bool = field(default=False, compare=False, repr=False)


@dataclass(frozen=True)
class Message:
    """One turn of a conversation.

    ``images`` are in the order their MEDIA_MARKER placeholders appear in ``content``;
    a message with images and no marker has them before its text.
    """

    role: Role
    content: str = ""
    name: str | None = None
    tool_call_id: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    reasoning: str | None = None
    images: tuple[Image, ...] = ()


@dataclass(frozen=True)
class GenerationParams:
    """How to sample; defaults follow llama.cpp's own."""

    max_tokens: int | None = 512
    temperature: float = 0.8
    top_p: float = 0.95
    top_k: int = 40
    min_p: float = 0.05
    repeat_penalty: float = 1.0
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    stop: tuple[str, ...] = ()
    seed: int | None = None
    grammar: str | None = None  # GBNF text
    json_schema: str | None = None  # JSON Schema text; the engine turns it into a grammar
    logprobs: int | None = None
    timeout_s: float | None = None
    # The context the model is to be loaded with for this request (a chat's own setting);
    # None: the fitted one. The scheduler reloads a model whose context differs.
    context_length: int | None = None
    # Where a mixture-of-experts model's routed experts go for this request (a chat's own
    # ``engine.cpu_moe``: "all", "none" or N layers in RAM); None: the setting. The
    # scheduler reloads a model placed otherwise.
    cpu_moe: str | int | None = None


@dataclass(frozen=True)
class ChatCall:
    """One chat request to an engine, whatever protocol or view it came from.

    Each protocol's translator (its ``chat_call``, in ``server/protocols/<protocol>/``)
    and the chat core build one; ``Engine.stream_chat(call, cancel)`` takes it. Plain frozen data
    (str, numbers, tuples, plain mappings, such dataclasses), so it can cross a pipe.

    ``template_kwargs`` are variables for the chat template (``enable_thinking``).
    ``forced``: the answer must be a call of one of ``tools`` (``tool_choice`` required
    or named; the translator narrowed ``tools`` to the named one), so none of its text
    streams before it is parsed. ``stream_bare``: an answer that opens like a bare JSON
    call streams anyway (a view that takes the words back once a call is found, as the
    chat core does); otherwise it is held until its end tells whether it is a call.
    ``progress``: a local model's stream also says how far it has read the prompt
    (``Delta.read``, once admitted and then after each piece), for a window that shows
    it; the server never asks.
    """

    messages: tuple[Message, ...]
    params: GenerationParams = field(default_factory=GenerationParams)
    tools: tuple[ToolSpec, ...] = ()
    template_kwargs: dict[str, Any] | None = None  # a client's JSON, for the template
    forced: bool = False
    stream_bare: bool = False
    progress: bool = False

    @classmethod
    def of(
        cls,
        messages: Sequence[Message],
        params: GenerationParams | None = None,
        tools: Sequence[ToolSpec] | None = None,
        template_kwargs: Mapping[str, Any] | None = None,
        *,
        forced: bool = False,
        stream_bare: bool = False,
        progress: bool = False,
    ) -> ChatCall:
        """A call from a conversation (sequences and mappings copied into plain data)."""
        return cls(
            tuple(messages),
            params or GenerationParams(),
            tuple(tools or ()),
            dict(template_kwargs) if template_kwargs else None,
            forced=forced and bool(tools),
            stream_bare=stream_bare,
            progress=progress,
        )

    def openai_tools(self) -> list[dict[str, Any]] | None:  # JSON, as ``openai``
        """The tools as OpenAI ``tools`` entries, or None when none are offered."""
        return [tool.openai() for tool in self.tools] or None

    def tool_schemas(self) -> dict[str, dict[str, Any] | None]:  # name -> JSON Schema
        """Tool name -> parameters schema (the call parsers read string types from it)."""
        return {tool.name: tool.parameters for tool in self.tools}


@dataclass(frozen=True)
class Usage:
    """Token counts of one request."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0  # prompt tokens served from a reused KV prefix

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class Timings:
    """Measured speed of one request, in seconds and tokens per second."""

    load_s: float = 0.0
    queue_s: float = 0.0
    prompt_s: float = 0.0
    time_to_first_token_s: float = 0.0
    generation_s: float = 0.0


@dataclass(frozen=True)
class TokenLogprob:
    """Log-probability of one sampled token and its best alternatives."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class Delta:
    """One piece of a streamed answer; the last one carries ``finish_reason`` and usage.

    A local engine's stream begins with ``ADMITTED`` (``admitted`` set, nothing else):
    the request passed every check that refuses it (model loaded, prompt tokenized and
    within the context, sampler built) and its prompt is about to be read, which can
    take minutes. Before it, a stream raises its refusal; after it, only faults. The
    server answers (status and opening event) on it; a consumer that wants only words
    can ignore it, as it carries none. A stream without it (a remote or a test engine)
    is admitted with its first delta.
    """

    text: str = ""
    reasoning: str = ""
    finish_reason: FinishReason | None = None
    usage: Usage | None = None
    timings: Timings | None = None
    logprobs: tuple[TokenLogprob, ...] = ()
    stop_sequence: str | None = None  # final delta: the stop string that ended the answer
    placement: Placement | None = None  # final delta of a local model: where it ran
    admitted: bool = False  # only on ``ADMITTED``: the request passed its checks
    # Calls the model made, parsed on the engine's side (a local model's markup is held
    # back from ``text``; a remote's structured calls pass through): the final delta.
    tool_calls: tuple[ToolCall, ...] = ()
    # While the prompt is read, for a call that asked (``ChatCall.progress``): its tokens
    # read so far and in all (those a cache held count as read). Nothing else is set.
    read: tuple[int, int] | None = None

    @property
    def is_final(self) -> bool:
        """True for the closing delta of a stream."""
        return self.finish_reason is not None

    @property
    def tokens_per_s(self) -> float:
        """Generation speed of the whole request (final delta only)."""
        if self.usage is None or self.timings is None or self.timings.generation_s <= 0:
            return 0.0
        return self.usage.completion_tokens / self.timings.generation_s


ADMITTED = Delta(admitted=True)  # a stream's first delta once its request passed its checks


@dataclass(frozen=True)
class LocalPlan:
    """How a GGUF file is loaded on this machine, beyond the spec's context and layers.

    None means the engine's default (threads for batch_threads, llama-server's
    2048 / 512 for n_batch / n_ubatch). ``estimated_bytes`` is the fit's estimate,
    bookkeeping for the scheduler's memory budget: a change does not reload a model.
    """

    parallel: int = DEFAULT_PARALLEL
    batch_threads: int | None = None
    n_batch: int | None = None
    n_ubatch: int | None = None
    state_cache_bytes: int = DEFAULT_STATE_CACHE_BYTES
    cache_type: CacheType = "f16"
    prompt_cache_dir: Path | None = None  # None: conversations are not kept on disk
    prompt_cache_disk_bytes: int = 0
    lookup_draft: int = 0  # prompt-lookup (n-gram) tokens guessed per step; 0: off
    projector: Path | None = None  # mmproj GGUF of a vision model; None: text only
    swa_full: bool = False  # sliding-window layers keep every position (engine.swa_full_cache)
    # Mixture of experts: the routed experts of the first N layers stay in RAM whatever
    # the GPU layers (llama-server's --n-cpu-moe N; 0: none). Part of the plan so a
    # worker that crashes reloads with the same placement.
    n_cpu_moe: int = 0
    estimated_bytes: int = field(default=0, compare=False)


@dataclass(frozen=True)
class RemotePlan:
    """A model served by a configured remote endpoint (``NAME/MODEL``): nothing loads here."""

    name: str
    base_url: str
    model: str


@dataclass(frozen=True)
class ModelSpec:
    """What the engine needs to load one model: a file, not a catalog entry.

    Two specs are equal when a model loaded as one serves the other as is (every
    field and the plan count, except the plan's estimate): else the scheduler reloads.
    """

    path: Path | None  # None for a remote model
    model_id: str
    kind: ModelKind = "chat"
    context_length: int | None = None  # None: fit automatically
    gpu_layers: int | None = None  # None: fit automatically
    chat_template: str | None = None  # catalog override (Jinja2)
    reasoning_format: Literal["none", "think"] = "none"
    threads: int | None = None
    extra_files: tuple[Path, ...] = ()  # the other shards of a split GGUF
    plan: LocalPlan | RemotePlan = field(default_factory=LocalPlan)

    @property
    def file(self) -> Path:
        """The GGUF file of a local model; raises ValueError for a remote one."""
        if self.path is None:
            raise ValueError(f"{self.model_id} is a remote model: it has no file")
        return self.path

    @property
    def local(self) -> LocalPlan | None:
        """The local load plan, or None for a remote model."""
        return self.plan if isinstance(self.plan, LocalPlan) else None

    @property
    def estimated_bytes(self) -> int:
        """Memory the fit expects this model to take here (0 for a remote model)."""
        return self.plan.estimated_bytes if isinstance(self.plan, LocalPlan) else 0


@dataclass(frozen=True)
class LoadReport:
    """How a model was actually loaded, for the UI, logs and the benchmark."""

    model_id: str
    path: Path | None
    context_length: int
    gpu_layers: int
    offload_supported: bool
    load_s: float
    estimated_bytes: int
    template_source: str
    notes: tuple[str, ...] = ()
    placement: Placement | None = None  # None: not a local llama.cpp model
    cache_type: str = "f16"  # the KV cache's element type as loaded
    n_cpu_moe: int = 0  # layers whose routed experts were kept in RAM by name


@dataclass(frozen=True)
class EngineStats:
    """What a loaded engine has done since load, for /metrics and the benchmark.

    ``decode_steps`` counts llama_decode calls for generation; ``tokens_decoded`` the
    tokens they carried, so tokens_decoded / decode_steps is the batching achieved.
    """

    slots_total: int = 1
    slots_busy: int = 0
    prompt_tokens_processed: int = 0  # prompt tokens actually decoded
    prompt_tokens_cached: int = 0  # prompt tokens served from a slot's kept prefix
    decode_steps: int = 0
    tokens_decoded: int = 0
    embed_decodes: int = 0
    embeds_cancelled: int = 0  # embed/rerank calls stopped because their client left
    requests_waiting: int = 0  # generation requests queued in the engine for a free slot
    draft_tokens: int = 0  # prompt-lookup guesses decoded
    draft_accepted: int = 0  # of which the model then sampled (free tokens)
    images_encoded: int = 0  # pictures run through the vision encoder (not from its cache)


@dataclass(frozen=True)
class Placement:
    """Where a loaded model's layers are: how many on which GPU devices, or the CPU only.

    ``layers_total`` counts as llama.cpp does (repeating layers plus the output layer), so
    Gemma 3 270M fully offloaded is 19/19.
    """

    layers_total: int
    layers_offloaded: int = 0
    devices: tuple[str, ...] = ()  # e.g. ("Vulkan0 (llvmpipe)",), in llama.cpp's order
    # Mixture of experts: the routed experts of the first N layers were kept in RAM by
    # name (llama-server's --n-cpu-moe N) while their layers are on the GPU.
    experts_in_ram: int = 0

    @property
    def cpu_only(self) -> bool:
        """True when no layer is on a GPU."""
        return self.layers_offloaded <= 0 or not self.devices

    def describe(self) -> str:
        """``19/19 layers on Vulkan0 (llvmpipe)``, ``10/19 layers on CUDA0 (…), 9 on the
        CPU``, ``48/48 layers on CUDA0 (…), experts of the first 47 layers in RAM`` or
        ``CPU only``."""
        if self.cpu_only:
            return "CPU only"
        text = f"{self.layers_offloaded}/{self.layers_total} layers on {', '.join(self.devices)}"
        rest = self.layers_total - self.layers_offloaded
        text = f"{text}, {rest} on the CPU" if rest > 0 else text
        if self.experts_in_ram > 0:
            text += f", experts of the first {self.experts_in_ram} layers in RAM"
        return text
