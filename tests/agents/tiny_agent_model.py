"""A tiny random-weight model that tokenizes and chats like Gemma 3, for agent-sized prompts.

Coding agents send 1k–13k-token prompts. Gemma 3 270M needs a minute of CPU for one of
those; this model keeps Gemma's tokenizer (so prompts count as many tokens as on Gemma),
Gemma's chat format (so roles fold and alternate as they do there) and its 32k context,
on a 2-layer, 64-wide llama body that reads 13k tokens in about a second.

Its output layer favours a handful of tokens (words, ``.``, ``"``, ``}`` and
``<end_of_turn>``): free answers end after a few words, and a grammar-forced tool call's
strings close within a few tokens, so a forced call always fits a short answer limit.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from gguf import GGUFReader, GGUFValueType, GGUFWriter, LlamaFileType

from desktop.engine._prompting.templates import ARCHITECTURE_TEMPLATES
from tests.fixtures.tiny_gguf import finish, llama_header, llama_tensors

CONTEXT = 32768  # Gemma 3's trained context
FAVOURED = ["▁hello", "▁world", "▁hi", ".", "!", '"', "}", "<end_of_turn>"]


def _field(reader: GGUFReader, key: str) -> object:
    field = reader.fields[key]
    if field.types[0] == GGUFValueType.ARRAY:
        kind = field.types[1]
        if kind == GGUFValueType.STRING:
            return [bytes(field.parts[i]).decode("utf-8") for i in field.data]
        return [field.parts[i][0].item() for i in field.data]
    value = field.parts[field.data[0]]
    if field.types[0] == GGUFValueType.STRING:
        return bytes(value).decode("utf-8")
    return value[0].item()


def write_tiny_gemma_vocab(
    gemma: Path, path: Path, *, seed: int = 5, n_embd: int = 64, n_layer: int = 2
) -> Path:
    """Write the model to ``path`` (once: an existing file is reused) and return it."""
    if path.exists():
        return path
    reader = GGUFReader(str(gemma))
    tokens = _field(reader, "tokenizer.ggml.tokens")
    scores = _field(reader, "tokenizer.ggml.scores")
    types = _field(reader, "tokenizer.ggml.token_type")
    assert isinstance(tokens, list) and isinstance(scores, list) and isinstance(types, list)
    rng = np.random.default_rng(seed)
    n_vocab, n_head, n_head_kv = len(tokens), 4, 2
    partial = path.with_suffix(".partial")
    writer = GGUFWriter(str(partial), "llama")
    llama_header(
        writer,
        name="tiny-gemma-vocab",
        n_ctx=CONTEXT,
        n_embd=n_embd,
        n_layer=n_layer,
        n_head=n_head,
        n_head_kv=n_head_kv,
        eps=1e-6,
        file_type=LlamaFileType.MOSTLY_F16,
    )
    writer.add_tokenizer_model(str(_field(reader, "tokenizer.ggml.model")))
    writer.add_tokenizer_pre(str(_field(reader, "tokenizer.ggml.pre")))
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    for key, add in (
        ("bos_token_id", writer.add_bos_token_id),
        ("eos_token_id", writer.add_eos_token_id),
        ("unknown_token_id", writer.add_unk_token_id),
        ("padding_token_id", writer.add_pad_token_id),
    ):
        add(int(_field(reader, f"tokenizer.ggml.{key}")))  # type: ignore[call-overload]
    writer.add_add_bos_token(bool(_field(reader, "tokenizer.ggml.add_bos_token")))
    writer.add_add_eos_token(bool(_field(reader, "tokenizer.ggml.add_eos_token")))
    writer.add_add_space_prefix(bool(_field(reader, "tokenizer.ggml.add_space_prefix")))
    writer.add_chat_template(ARCHITECTURE_TEMPLATES["gemma3"])
    # Every other token's logit stays near 0; the favoured ones' reach tens.
    output = np.zeros((n_vocab, n_embd), dtype=np.float16)
    index = {tok: i for i, tok in enumerate(tokens)}
    for tok in FAVOURED:
        # The end of turn less than the rest: answers are a few words, rarely none.
        scale = 1.0 if tok == "<end_of_turn>" else 2.0
        output[index[tok]] = rng.standard_normal(n_embd) * scale

    token_embd = (rng.standard_normal((n_vocab, n_embd)) * 0.2).astype(np.float16)
    llama_tensors(
        writer,
        rng,
        token_embd=token_embd,
        output=output,
        n_layer=n_layer,
        n_kv=n_head_kv * (n_embd // n_head),
    )
    finish(writer)
    partial.replace(path)
    return path
