"""Deterministic embeddings for the fake Gemini server, in which synonyms are close.

Each word maps to one or more concept ids through a small built-in synonym table (a word
not in it is its own concept); each concept is hashed to a few signed dimensions, and a text's
vector is the normalised sum over its words. Two texts that share no word but name the same
concepts ("automobile colour", "my car is painted crimson") therefore score high, and an
unrelated text scores near zero. The model name seeds the hashing, so a different embedding
model gives different (incomparable) vectors, as a real model change would.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable

from tests.fakes.gemini_replies import JsonDict

SYNONYMS: dict[str, tuple[str, ...]] = {
    "car": ("vehicle",),
    "cars": ("vehicle",),
    "automobile": ("vehicle",),
    "vehicle": ("vehicle",),
    "truck": ("vehicle",),
    "colour": ("colour",),
    "color": ("colour",),
    "painted": ("colour",),
    "paint": ("colour",),
    "crimson": ("colour", "red"),
    "red": ("colour", "red"),
    "scarlet": ("colour", "red"),
    "dog": ("pet",),
    "puppy": ("pet",),
    "cat": ("pet",),
    "kitten": ("pet",),
    "pet": ("pet",),
    "birthday": ("birthday",),
    "born": ("birthday",),
    "anniversary": ("birthday",),
    "physician": ("doctor",),
    "doctor": ("doctor",),
    "dentist": ("doctor",),
}
STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "is",
        "are",
        "was",
        "were",
        "my",
        "your",
        "our",
        "of",
        "to",
        "in",
        "on",
        "and",
        "or",
        "what",
        "which",
        "who",
        "how",
        "do",
        "does",
        "did",
        "i",
        "you",
        "it",
        "its",
        "it's",
        "that",
        "this",
        "be",
        "with",
        "for",
        "at",
        "by",
        "as",
        "me",
        "we",
        "he",
        "she",
        "they",
        "them",
    ]
)
_WORD = re.compile(r"[a-z0-9']+")
_HASHES_PER_CONCEPT = 4


def concepts(text: str) -> list[str]:
    """The concept ids a text names, one entry per meaningful word."""
    found: list[str] = []
    for word in _WORD.findall(text.lower()):
        if word in STOP_WORDS:
            continue
        found.extend(SYNONYMS.get(word, (word,)))
    return found


def embed(text: str, dimensions: int, model: str) -> list[float]:
    """A unit vector of `dimensions` floats for `text` (all zeros but one for no concept)."""
    vector = [0.0] * dimensions
    for concept in concepts(text):
        for n in range(_HASHES_PER_CONCEPT):
            digest = hashlib.sha256(f"{model}|{concept}|{n}".encode()).digest()
            index = int.from_bytes(digest[:4], "big") % dimensions
            vector[index] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vector))
    if norm == 0:
        vector[0] = 1.0
        return vector
    return [v / norm for v in vector]


DEFAULT_DIMENSIONS = 3072


EmbedFn = Callable[[list[str], int, str], list[list[float]]]
"""Vectors for (texts, dimensions, model): another embedding model behind the fake."""


def batch_embed_response(body: JsonDict, model: str, embedder: EmbedFn | None = None) -> JsonDict:
    """The `:batchEmbedContents` answer: one embedding per request, in order (by `embedder`
    when given, else by the synonym hashing above)."""
    requests = body.get("requests", [])
    texts = [
        " ".join(str(p.get("text", "")) for p in r["content"].get("parts", [])) for r in requests
    ]
    dims = [int(r.get("outputDimensionality") or DEFAULT_DIMENSIONS) for r in requests]
    if embedder is not None and texts:
        values = embedder(texts, dims[0], model)
    else:
        values = [embed(text, n, model) for text, n in zip(texts, dims, strict=True)]
    return {"embeddings": [{"values": v} for v in values]}
