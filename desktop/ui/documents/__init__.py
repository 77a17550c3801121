"""The Documents screen: collections, indexing, a collection's embedding model."""
