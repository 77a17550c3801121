"""Chat with your documents: load, chunk, embed, index, search and cite (RAG)."""
