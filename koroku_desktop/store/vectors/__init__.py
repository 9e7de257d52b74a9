"""Vectors: the embeddings table, the index files beside it, the text to embed."""
