"""Embedding texts for the API (OpenAI's ``/v1/embeddings``, Ollama's ``/api/embed``)."""

from __future__ import annotations

from desktop.engine.protocol import Engine
from desktop.server.cache import embedding_key
from desktop.server.services import Services


def embed(
    services: Services, model: str, inputs: list[str | list[int]]
) -> tuple[list[list[float]], int]:
    """Vectors for ``inputs`` (cache first) and the prompt token count, in one engine turn.

    Tokens are the model's own count: the local tokenizer's, or the remote's
    ``usage.prompt_tokens`` for the texts it embedded (texts served from the cache, and
    those of a remote that reports no usage, are estimated by its ``tokenize``). Blocks.
    """

    def work(engine: Engine) -> tuple[list[list[float]], int]:
        texts = [i if isinstance(i, str) else engine.detokenize(i) for i in inputs]
        keys = [embedding_key(model, t) for t in texts]
        vectors: list[list[float] | None] = [services.embeddings.get(k) for k in keys]
        for v in vectors:
            services.metrics.cache_event("embeddings", v is not None)
        missing = [i for i, v in enumerate(vectors) if v is None]
        counted: int | None = None
        if missing:
            fresh, counted = engine.embed_counted([texts[i] for i in missing])
            for i, vector in zip(missing, fresh, strict=True):
                vectors[i] = vector
                services.embeddings.put(keys[i], vector)
        embedded = set(missing)
        uncounted = (
            texts if counted is None else [t for i, t in enumerate(texts) if i not in embedded]
        )
        tokens = (counted or 0) + sum(
            len(engine.tokenize(t, add_bos=True, special=False)) for t in uncounted
        )
        return [v for v in vectors if v is not None], tokens

    result: tuple[list[list[float]], int] = services.scheduler.with_engine(model, work)
    return result
