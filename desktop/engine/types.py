"""Plain values that flow in and out of the engine; no llama_cpp types leak past here."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]
ModelKind = Literal["chat", "embedding", "reranker"]
FinishReason = Literal["stop", "length", "tool_calls", "cancelled", "timeout"]


@dataclass(frozen=True)
class ToolCall:
    """One function call the model asked for."""

    id: str
    name: str
    arguments: str  # JSON text, exactly as OpenAI transmits it


@dataclass(frozen=True)
class Message:
    """One turn of a conversation."""

    role: Role
    content: str = ""
    name: str | None = None
    tool_call_id: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    reasoning: str | None = None


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
class Chunk:
    """One piece of a streamed answer; the last one carries ``finish_reason`` and usage."""

    text: str = ""
    reasoning: str = ""
    finish_reason: FinishReason | None = None
    usage: Usage | None = None
    timings: Timings | None = None
    logprobs: tuple[TokenLogprob, ...] = ()
    stop_sequence: str | None = None  # final chunk: the stop string that ended the answer
    placement: Placement | None = None  # final chunk of a local model: where it ran

    @property
    def is_final(self) -> bool:
        """True for the closing chunk of a stream."""
        return self.finish_reason is not None

    @property
    def tokens_per_s(self) -> float:
        """Generation speed of the whole request (final chunk only)."""
        if self.usage is None or self.timings is None or self.timings.generation_s <= 0:
            return 0.0
        return self.usage.completion_tokens / self.timings.generation_s


@dataclass(frozen=True)
class ModelSpec:
    """What the engine needs to load one model: a file, not a catalog entry."""

    path: Path
    model_id: str
    kind: ModelKind = "chat"
    context_length: int | None = None  # None: fit automatically
    gpu_layers: int | None = None  # None: fit automatically
    chat_template: str | None = None  # catalog override (Jinja2)
    reasoning_format: Literal["none", "think"] = "none"
    threads: int | None = None
    extra_files: tuple[Path, ...] = ()  # the other shards of a split GGUF
    options: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)


@dataclass(frozen=True)
class LoadReport:
    """How a model was actually loaded, for the UI, logs and the benchmark."""

    model_id: str
    path: Path
    context_length: int
    gpu_layers: int
    offload_supported: bool
    load_s: float
    estimated_bytes: int
    template_source: str
    notes: tuple[str, ...] = ()
    placement: Placement | None = None  # None: not a local llama.cpp model


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
    requests_waiting: int = 0  # generation requests queued in the engine for a free slot


@dataclass(frozen=True)
class Placement:
    """Where a loaded model's layers are: how many on which GPU devices, or the CPU only.

    ``layers_total`` counts as llama.cpp does (repeating layers plus the output layer), so
    Gemma 3 270M fully offloaded is 19/19.
    """

    layers_total: int
    layers_offloaded: int = 0
    devices: tuple[str, ...] = ()  # e.g. ("Vulkan0 (llvmpipe)",), in llama.cpp's order

    @property
    def cpu_only(self) -> bool:
        """True when no layer is on a GPU."""
        return self.layers_offloaded <= 0 or not self.devices

    def describe(self) -> str:
        """``19/19 layers on Vulkan0 (llvmpipe)``, ``10/19 layers on CUDA0 (…), 9 on the
        CPU`` or ``CPU only``."""
        if self.cpu_only:
            return "CPU only"
        text = (f"{self.layers_offloaded}/{self.layers_total} layers on "
                f"{', '.join(self.devices)}")
        rest = self.layers_total - self.layers_offloaded
        return f"{text}, {rest} on the CPU" if rest > 0 else text
