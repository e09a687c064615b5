"""A deterministic, dependency-free feature-hashing embedder. For tests and fast CI, never the default.

Features are character n-grams (1 to 3 characters, so Chinese text works too) and whole words of
the NFKC-normalised, lower-cased text. Each feature is hashed (blake2b) to one of ``dimension``
buckets with a +/-1 sign; the vector is L2-normalised. Texts that share many n-grams get a high
cosine similarity: lexical, not semantic, but stable across runs, machines and Python versions.
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata

from .embedding import BatchedEmbedder
from .usage import Usage

DEFAULT_HASHING_DIMENSION = 256
_WORD = re.compile(r"\w+", re.UNICODE)
_SPACE = re.compile(r"\s+")


def _features(text: str) -> list[str]:
    normal = _SPACE.sub(" ", unicodedata.normalize("NFKC", text).lower()).strip()
    if not normal:
        return ["<empty>"]
    padded = f" {normal} "
    features = [f"w:{word}" for word in _WORD.findall(normal)]
    for n in (1, 2, 3):
        features.extend(f"{n}:{padded[i : i + n]}" for i in range(len(padded) - n + 1) if padded[i : i + n].strip())
    return features


def hash_vector(text: str, dimension: int = DEFAULT_HASHING_DIMENSION) -> list[float]:
    """The unit-length feature-hashing vector of ``text``."""
    vector = [0.0] * dimension
    for feature in _features(text):
        digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        vector[value % dimension] += 1.0 if (value >> 63) & 1 else -1.0
    norm = math.sqrt(sum(x * x for x in vector))
    if norm == 0.0:  # every feature cancelled out: fall back to one fixed bucket
        vector[0] = 1.0
        return vector
    return [x / norm for x in vector]


class HashingEmbedder(BatchedEmbedder):
    """Character n-gram feature hashing; ``dimension`` defaults to 256."""

    provider = "hashing"

    def __init__(
        self,
        dimension: int | None = None,
        *,
        batch_size: int = 256,
        usage: Usage | None = None,
    ) -> None:
        size = dimension or DEFAULT_HASHING_DIMENSION
        if size < 8:
            raise ValueError(f"the hashing embedder needs at least 8 dimensions, got {size}")
        super().__init__(model_id=f"hashing-char-ngram-{size}", dimension=size, batch_size=batch_size, usage=usage)

    def _embed(self, texts: list[str], *, query: bool) -> list[list[float]]:
        return [hash_vector(text, self.dimension) for text in texts]
