"""Read a GGUF header without loading the model, and estimate the memory it needs.

The estimate is weights + KV cache for the chosen context + a compute overhead. It is
what lets us say "won't fit" *before* a 20 GB download or a load that takes the machine
down, which peers get wrong by a factor of two (LM Studio) or not at all (Ollama).
"""

from __future__ import annotations

import mmap
import re
import struct
from collections.abc import Collection, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from desktop.base.errors import ModelFileError

GGUF_MAGIC = b"GGUF"
# Architectures whose attention caches a compressed latent instead of full K/V (MLA).
_MLA_ARCHS = frozenset({"deepseek2", "kimi-linear", "kimi-k2"})
# Bytes per cached K/V element: f16 by default; q8_0 stores blocks of 32 in 34 bytes.
KV_BYTES_PER_ELEMENT = {"f16": 2.0, "q8_0": 34 / 32}
_COMPUTE_OVERHEAD_BYTES = 96 * 1024 * 1024
# Sliding-window layout by architecture when the GGUF names none: in each group of this
# many layers all but the last use the window (llama.cpp's set_swa_pattern; 0: all).
_SWA_PATTERN = {
    "gemma2": 2,
    "gemma3": 6,
    "gemma3n": 5,
    "gemma-embedding": 6,
    "cohere2": 4,
    "llama4": 4,
    "gpt-oss": 2,
    "exaone4": 4,
    "olmo2": 4,
}
# A mixture-of-experts layer's routed expert tensors, as llama-server's --cpu-moe names
# them (common/arg.cpp ``LLM_FFN_EXPS_REGEX``); the shared experts (``*_shexp``) are not.
EXPERT_TENSOR = re.compile(r"^blk\.(\d+)\.ffn_(up|down|gate)_exps")
_LAYER_TENSOR = re.compile(r"^blk\.(\d+)\.")
INPUT_LAYER, OUTPUT_LAYER = -1, -2  # WeightGroup.layer of token_embd / of everything else
# The engine's prompt micro-batch (llama-server's n_ubatch): a window-sized cache holds
# this many cells beyond the slots' windows, for the tokens of one decode.
N_UBATCH = 512


@dataclass(frozen=True)
class WeightGroup:
    """The bytes of a model's weights of one ggml type in one place: a repeating layer's
    routed experts or the rest of it, the input (token embedding) or the output layer.

    ``repackable`` marks matrix weights llama.cpp's CPU backend may copy into its
    "CPU_REPACK" buffer when they stay in CPU memory (2-D weights of a matrix product
    and 3-D expert stacks, with rows in multiples of 8; never the token embedding, which
    is only looked up): whether it does depends on the type and the CPU (see
    ``repack_bytes``).
    """

    layer: int  # the block's index, INPUT_LAYER or OUTPUT_LAYER
    expert: bool
    ggml_type: str  # e.g. "Q4_K", "Q6_K", "F32"
    bytes: int
    repackable: bool = False


@dataclass(frozen=True)
class GGUFInfo:
    """What a GGUF header tells us about a model."""

    path: Path
    architecture: str
    name: str | None
    parameters: int
    weight_bytes: int
    file_bytes: int
    context_length: int
    block_count: int
    embedding_length: int
    head_count: int
    head_count_kv: int
    key_length: int
    value_length: int
    kv_lora_rank: int | None
    rope_dimension: int | None
    chat_template: str | None
    file_type: str | None
    pooling_type: int | None
    split_count: int
    sliding_window: int = 0  # tokens a sliding-window layer attends to (0: none, Gemma 3: 512)
    swa_layers: int = 0  # layers that use the sliding window (Gemma 3 270M: 15 of 18)
    vocab_size: int = 0  # tokens in the vocabulary (rows of the output's logits)
    expert_count: int = 0  # routed experts per MoE layer (0: a dense model)
    expert_used_count: int = 0  # experts each token is routed to
    # Layers that keep a KV cache (0: every block). Fewer for a model whose last blocks
    # predict the next tokens for speculative decoding (GLM-4.5's nextn layer, which
    # llama.cpp neither loads nor caches unless asked) or whose linear-attention layers
    # keep a fixed-size state instead (Kimi-Linear's KDA layers).
    kv_layers: int = 0
    # Weight bytes by place and type (empty for a header built by hand: the fit then
    # treats every layer alike, with no experts and no repack copy).
    weights: tuple[WeightGroup, ...] = ()

    def expert_layer_bytes(self) -> list[int]:
        """Bytes of each repeating layer's routed expert tensors (0 for a dense layer)."""
        per_layer = [0] * max(0, self.block_count)
        for group in self.weights:
            if group.expert and 0 <= group.layer < len(per_layer):
                per_layer[group.layer] += group.bytes
        return per_layer

    @property
    def expert_layers(self) -> int:
        """How many layers hold routed experts (0: not a mixture-of-experts model)."""
        return sum(1 for size in self.expert_layer_bytes() if size > 0)

    def weight_split(
        self, gpu_layers: int, experts_in_ram: int, repack_types: Collection[str] = ()
    ) -> tuple[int, int, int]:
        """Weight bytes (on the GPU, in RAM, in RAM's repack copy) for a load with
        ``gpu_layers`` of ``block_count + 1`` layers offloaded and the routed experts of
        the first ``experts_in_ram`` layers kept in RAM (llama-server's --n-cpu-moe).

        llama.cpp offloads the last layers (the output layer first), keeps the token
        embedding in RAM, and copies the weights of ``repack_types`` left in CPU memory
        into its repack buffer beside the mapped file. Bytes not in ``weights`` (a
        vision projector added to ``weight_bytes``) go with the output layer.
        """
        layers = max(1, self.block_count)
        if not self.weights:  # a header built by hand: every layer alike
            total = self.block_count + 1
            on_gpu = int(self.weight_bytes * min(max(gpu_layers, 0), total) / total)
            return on_gpu, self.weight_bytes - on_gpu, 0
        first_gpu = layers + 1 - max(0, gpu_layers)  # llama.cpp's i_gpu_start
        gpu = ram = repack = 0
        for group in self.weights:
            if group.layer == INPUT_LAYER:
                on_gpu = False
            elif group.layer == OUTPUT_LAYER:
                on_gpu = gpu_layers >= 1
            else:
                on_gpu = group.layer >= first_gpu and not (
                    group.expert and group.layer < experts_in_ram
                )
            if on_gpu:
                gpu += group.bytes
            else:
                ram += group.bytes
                if group.repackable and group.ggml_type in repack_types:
                    repack += group.bytes
        rest = self.weight_bytes - sum(group.bytes for group in self.weights)
        if gpu_layers >= 1:
            gpu += max(0, rest)
        else:
            ram += max(0, rest)
        return gpu, ram, repack

    def kv_caches(self, slots: int, swa_full: bool = False) -> int:
        """KV caches of ``context_length`` cells a load with ``slots`` slots keeps: one
        shared by the slots, or one per slot for a model with sliding-window layers kept
        at full size (``swa_full``; the engine then gives each slot its own, see
        engine/_native.py)."""
        return max(1, slots) if self.sliding_window > 0 and swa_full else 1

    def kv_bytes(
        self, context_length: int, cache_type: str = "f16", slots: int = 1, swa_full: bool = False
    ) -> int:
        """The KV cache the engine allocates: every layer keeps ``context_length`` cells,
        except sliding-window layers, which keep the slots' windows plus one micro-batch
        (unless ``swa_full``), as llama.cpp sizes them."""
        per_token = self.kv_bytes_per_token(cache_type)
        full = per_token * context_length * self.kv_caches(slots, swa_full)
        if self.sliding_window <= 0 or self.swa_layers <= 0 or swa_full:
            return full
        per_layer = per_token // max(1, self.kv_layers or self.block_count)
        cells = self.swa_cells(context_length, slots)
        return full - per_layer * self.swa_layers * (context_length - cells)

    def swa_cells(self, context_length: int, slots: int = 1) -> int:
        """Cells of a window-sized sliding-window cache shared by ``slots`` slots."""
        cells = self.sliding_window * max(1, slots) + N_UBATCH
        return min(context_length, -(-cells // 256) * 256)  # llama.cpp pads to 256

    def checkpoint_bytes(self, context_length: int, cache_type: str = "f16", slots: int = 1) -> int:
        """RAM for the slots' context checkpoints (a copy of each one's window layers) of
        a window-sized cache; 0 for any other model."""
        if self.sliding_window <= 0 or self.swa_layers <= 0:
            return 0
        per_layer = self.kv_bytes_per_token(cache_type) // max(
            1, self.kv_layers or self.block_count
        )
        held = min(self.swa_cells(context_length, slots), self.sliding_window + N_UBATCH)
        return max(1, slots) * per_layer * self.swa_layers * held

    def kv_bytes_per_token(self, cache_type: str = "f16") -> int:
        """Bytes of KV cache one token of context costs (f16, or q8_0: about half)."""
        if self.architecture in _MLA_ARCHS and self.kv_lora_rank:
            per_layer = self.kv_lora_rank + (self.rope_dimension or 64)
        else:
            per_layer = self.head_count_kv * (self.key_length + self.value_length)
        layers = self.kv_layers or self.block_count
        return int(layers * per_layer * KV_BYTES_PER_ELEMENT[cache_type])

    def estimate_bytes(
        self, context_length: int, cache_type: str = "f16", slots: int = 1, swa_full: bool = False
    ) -> int:
        """Memory to run at ``context_length`` with ``slots`` slots: weights + KV cache(s)
        (+ context checkpoints of a window-sized one) + compute buffers."""
        compute = _COMPUTE_OVERHEAD_BYTES + context_length * self.embedding_length * 4
        kv = self.kv_bytes(context_length, cache_type, slots, swa_full)
        if not swa_full:
            kv += self.checkpoint_bytes(context_length, cache_type, slots)
        return self.weight_bytes + kv + compute

    # Any: asdict() for `models info --json`; the dataclass is the shape
    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly view (the chat template is shortened, weights by layer summed)."""
        data = asdict(self)
        data["path"] = str(self.path)
        del data["weights"]
        data["expert_layers"] = self.expert_layers
        if self.chat_template and len(self.chat_template) > 200:
            data["chat_template"] = self.chat_template[:200] + "…"
        return data


# GGUF value types -> struct format (scalars); 8 = string, 9 = array.
_SCALARS = {
    0: "<B",
    1: "<b",
    2: "<H",
    3: "<h",
    4: "<I",
    5: "<i",
    6: "<f",
    7: "<?",
    10: "<Q",
    11: "<q",
    12: "<d",
}
_STRING, _ARRAY = 8, 9
# Arrays we never need item by item (vocabularies of 150K+ entries): skipped, not decoded.
_SKIP_ARRAYS = (
    "tokenizer.ggml.tokens",
    "tokenizer.ggml.scores",
    "tokenizer.ggml.token_type",
    "tokenizer.ggml.merges",
)


class _Cursor:
    """Sequential reader over the header bytes of a memory-mapped file."""

    def __init__(self, data: mmap.mmap) -> None:
        self.data = data
        self.pos = 0

    def unpack(self, fmt: str) -> Any:
        value = struct.unpack_from(fmt, self.data, self.pos)[0]
        self.pos += struct.calcsize(fmt)
        return value

    def string(self) -> str:
        length = self.unpack("<Q")
        raw = self.data[self.pos : self.pos + length]
        if len(raw) != length:
            raise ValueError("string runs past the end of the file")
        self.pos += length
        return bytes(raw).decode("utf-8", errors="replace")

    def skip_string(self) -> None:
        length = self.unpack("<Q")  # read first: unpack moves pos
        self.pos += length

    def value(self, kind: int, *, keep: bool = True) -> Any:
        if kind in _SCALARS:
            return self.unpack(_SCALARS[kind])
        if kind == _STRING:
            return self.string() if keep else self.skip_string()
        if kind == _ARRAY:
            item_kind, count = self.unpack("<I"), self.unpack("<Q")
            if not keep:
                if item_kind in _SCALARS:
                    self.pos += struct.calcsize(_SCALARS[item_kind]) * count
                else:
                    for _ in range(count):
                        self.value(item_kind, keep=False)
                return None
            return [self.value(item_kind) for _ in range(count)]
        raise ValueError(f"unknown GGUF value type {kind}")


# Any: GGUF metadata values are ints, floats, text, bools or arrays by key
def _parse_header(path: Path) -> tuple[dict[str, Any], list[tuple[str, list[int], int, int]], int]:
    """Metadata, tensor infos (name, dims, type, offset) and data start of a GGUF file."""
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
        cur = _Cursor(data)
        cur.pos = 4
        version = cur.unpack("<I")
        if version < 2:
            raise ValueError(f"GGUF version {version} is too old")
        n_tensors, n_kv = cur.unpack("<Q"), cur.unpack("<Q")
        if n_tensors > 10_000_000 or n_kv > 1_000_000:
            raise ValueError("implausible tensor or key count")
        # Any: GGUF values of every type, by key (see _parse_header)
        meta: dict[str, Any] = {}
        for _ in range(n_kv):
            key = cur.string()
            kind = cur.unpack("<I")
            meta[key] = cur.value(kind, keep=key not in _SKIP_ARRAYS)
        tensors = []
        for _ in range(n_tensors):
            name = cur.string()
            dims = [cur.unpack("<Q") for _ in range(cur.unpack("<I"))]
            tensors.append((name, dims, cur.unpack("<I"), cur.unpack("<Q")))
        alignment = int(meta.get("general.alignment", 32))
        start = cur.pos + (-cur.pos % alignment)
    return meta, tensors, start


def _tensor_bytes(dims: list[int], ggml_type: int) -> tuple[int, int]:
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

    elements = 1
    for dim in dims:
        elements *= dim
    block, type_size = GGML_QUANT_SIZES[GGMLQuantizationType(ggml_type)]
    return elements, elements * type_size // block


def _check_magic(path: Path) -> int:
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            magic = handle.read(4)
    except FileNotFoundError:
        raise ModelFileError(f"model file not found: {path}") from None
    except IsADirectoryError:
        raise ModelFileError(f"{path} is a folder, not a .gguf file") from None
    except OSError as exc:
        raise ModelFileError(f"cannot read {path}: {exc.strerror}") from None
    if magic != GGUF_MAGIC:
        raise ModelFileError(
            f"{path.name} is not a GGUF model file (it does not start with 'GGUF'); "
            "EdgeDesk runs GGUF files only",
            kind="not_gguf",
            params={"file": path.name},
        )
    return size


def read_gguf(path: Path) -> GGUFInfo:
    """Parse the header of ``path``; a missing, foreign or truncated file raises ModelFileError.

    The header is walked directly (with the ``gguf`` package's type tables) because
    ``gguf.GGUFReader`` decodes every vocabulary entry: 26 s for a 262K-token vocabulary,
    against well under a second here.
    """
    file_bytes = _check_magic(path)
    try:
        meta, tensors, data_start = _parse_header(path)
        trunk = _trunk_layers(meta)
        weight_bytes = parameters = 0
        data_end = data_start
        sized = []
        for name, dims, ggml_type, offset in tensors:
            elements, size = _tensor_bytes(dims, ggml_type)
            parameters += elements
            data_end = max(data_end, data_start + offset + size)
            block = _LAYER_TENSOR.match(name)
            if trunk is not None and block is not None and int(block.group(1)) >= trunk:
                continue  # a nextn layer: llama.cpp skips it ("unused tensor ... ignoring")
            weight_bytes += size
            sized.append((name, dims, ggml_type, size))
        weights = _weight_groups(sized)
    except (ValueError, struct.error, KeyError, OverflowError) as exc:
        raise ModelFileError(
            f"{path.name} is damaged or truncated ({exc}); download it again",
            kind="gguf_damaged",
            params={"file": path.name},
        ) from None
    split_count = int(meta.get("split.count", 1) or 1)
    if split_count <= 1 and data_end > file_bytes:
        raise ModelFileError(
            f"{path.name} is truncated: {file_bytes} bytes on disk, header promises "
            f"{data_end}; download it again",
            kind="gguf_damaged",
            params={"file": path.name},
        )
    arch = str(meta.get("general.architecture") or "unknown")

    def num(key: str, default: int = 0) -> int:
        value = meta.get(f"{arch}.{key}")
        if isinstance(value, list):  # per-layer values in some archs; the max is safe
            value = max(value) if value else None
        return int(value) if value is not None else default

    head_count = num("attention.head_count", 1) or 1
    embedding = num("embedding_length")
    head_dim = embedding // head_count
    template = meta.get("tokenizer.chat_template")
    pooling = meta.get(f"{arch}.pooling_type")
    return GGUFInfo(
        path=path,
        architecture=arch,
        name=str(meta["general.name"]) if "general.name" in meta else None,
        parameters=parameters,
        weight_bytes=weight_bytes,
        file_bytes=file_bytes,
        context_length=num("context_length", 2048),
        block_count=num("block_count"),
        embedding_length=embedding,
        head_count=head_count,
        head_count_kv=num("attention.head_count_kv", head_count),
        key_length=num("attention.key_length", head_dim),
        value_length=num("attention.value_length", head_dim),
        kv_lora_rank=_cached_latent(meta, arch, num("attention.kv_lora_rank")),
        rope_dimension=num("rope.dimension_count") or None,
        chat_template=str(template) if template else None,
        file_type=_file_type_name(meta.get("general.file_type")),
        pooling_type=int(pooling) if pooling is not None else None,
        split_count=split_count,
        sliding_window=num("attention.sliding_window"),
        swa_layers=_swa_layers(meta, arch, num("block_count")),
        vocab_size=_vocab_size(tensors),
        expert_count=num("expert_count"),
        expert_used_count=num("expert_used_count"),
        kv_layers=_kv_layers(meta, arch, num("block_count"), trunk),
        weights=weights,
    )


# Any: GGUF metadata (see _parse_header)
def _trunk_layers(meta: dict[str, Any]) -> int | None:
    """The blocks llama.cpp runs when it is not asked for speculative decoding: all but
    the ``nextn_predict_layers`` at the end (None: the model has none)."""
    arch = str(meta.get("general.architecture") or "")
    nextn = meta.get(f"{arch}.nextn_predict_layers")
    blocks = meta.get(f"{arch}.block_count")
    if not isinstance(nextn, int) or not isinstance(blocks, int) or not 0 < nextn < blocks:
        return None
    return blocks - nextn


# Any: GGUF metadata (see _parse_header)
def _kv_layers(meta: dict[str, Any], arch: str, blocks: int, trunk: int | None) -> int:
    """How many layers keep a KV cache (0: every block): the trunk's, and of those only
    the ones with KV heads where the header lists them per layer (a linear-attention
    layer has none: llama.cpp keeps a recurrent state for it instead)."""
    layers = trunk if trunk is not None else blocks
    per_layer = meta.get(f"{arch}.attention.head_count_kv")
    if isinstance(per_layer, list) and per_layer:
        with_kv = sum(1 for heads in per_layer[:layers] if heads)
        return with_kv if with_kv != blocks else 0
    return layers if layers != blocks else 0


# Any: GGUF metadata (see _parse_header)
def _cached_latent(meta: dict[str, Any], arch: str, rank: int) -> int | None:
    """The latent rank the KV cache holds per token (MLA), or None when llama.cpp caches
    every head's K and V: a deepseek2 file converted before llama.cpp split its K/V
    projection (no ``attention.key_length_mla``; Moonlight's early GGUFs) runs as
    multi-head attention, with a cache many times larger."""
    if not rank:
        return None
    if arch == "deepseek2" and not meta.get(f"{arch}.attention.key_length_mla"):
        return None
    return rank


def _weight_groups(tensors: Iterable[tuple[str, list[int], int, int]]) -> tuple[WeightGroup, ...]:
    """Tensors (name, dims, ggml type, bytes) summed by layer, expert or not, type and
    whether llama.cpp's CPU repack could take them (see ``WeightGroup``)."""
    from gguf import GGMLQuantizationType

    sums: dict[tuple[int, bool, str, bool], int] = {}
    for name, dims, ggml_type, size in tensors:
        block = _LAYER_TENSOR.match(name)
        expert = EXPERT_TENSOR.match(name) is not None
        if block is not None:
            layer = int(block.group(1))
        elif name.startswith("token_embd."):
            layer = INPUT_LAYER
        else:
            layer = OUTPUT_LAYER
        n_dims = len(dims)
        while n_dims > 1 and dims[n_dims - 1] == 1:  # ggml_n_dims ignores trailing 1s
            n_dims -= 1
        repackable = (
            layer != INPUT_LAYER
            and name.endswith(".weight")
            and (n_dims == 2 or (n_dims == 3 and expert))
            and dims[1] % 8 == 0
        )
        type_name = GGMLQuantizationType(ggml_type).name
        key = (layer, expert, type_name, repackable)
        sums[key] = sums.get(key, 0) + size
    return tuple(
        WeightGroup(layer, expert, type_name, size, repackable)
        for (layer, expert, type_name, repackable), size in sums.items()
    )


# Any: GGUF metadata (see _parse_header)
def _swa_layers(meta: dict[str, Any], arch: str, layers: int) -> int:
    """How many of ``layers`` use the sliding window: the GGUF's per-layer flags or
    group size, else the architecture's as llama.cpp assumes it (0 when unknown: the
    fit then counts every layer at full size, never less than the engine needs)."""
    if not meta.get(f"{arch}.attention.sliding_window"):
        return 0
    pattern = meta.get(f"{arch}.attention.sliding_window_pattern")
    if isinstance(pattern, list):
        return sum(1 for flag in pattern[:layers] if flag)
    n = int(pattern) if isinstance(pattern, int) else _SWA_PATTERN.get(arch)
    if n is None:
        return 0
    return sum(1 for il in range(layers) if n == 0 or il % n < n - 1)


def _vocab_size(tensors: list[tuple[str, list[int], int, int]]) -> int:
    """Rows of the token embedding: the vocabulary the output's logits cover."""
    for name, dims, _type, _offset in tensors:
        if name == "token_embd.weight" and len(dims) == 2:
            return int(dims[1])
    return 0


def _file_type_name(value: Any) -> str | None:
    if value is None:
        return None
    from gguf import LlamaFileType

    try:
        return LlamaFileType(int(value)).name.removeprefix("MOSTLY_")
    except ValueError:
        return str(value)
