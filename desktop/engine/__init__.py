"""The only package that imports llama_cpp: load models, stream, embed, schedule."""
