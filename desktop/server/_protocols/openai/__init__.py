"""OpenAI's chat and text completions, embeddings, rerank and models endpoints."""
