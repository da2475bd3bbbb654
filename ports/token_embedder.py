"""Token-embedder port: an Embedder that also hands over its per-token vectors (late
interaction)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from .embedder import Embedder, Vector

TokenRows = bytes
"""float32 little-endian rows of `dimensions` values each, every row L2-normalised."""

MAX_TOKEN_ROWS = 64
"""At most this many token rows per text (the first ones): bounds storage and scoring."""


@runtime_checkable
class TokenEmbedder(Embedder, Protocol):
    @property
    def has_tokens(self) -> bool:
        """Whether this model exposes token states (a model that pools inside has none)."""
        ...

    def embed_with_tokens(
        self, texts: Sequence[str], drop_stopwords: bool
    ) -> list[tuple[Vector, TokenRows]]:
        """Per text, the vector `embed` returns and, from the same run, the unit vectors of its
        content tokens: special tokens and punctuation dropped, stopwords too when asked, at
        most MAX_TOKEN_ROWS; at least one row (the first token) when nothing else is left."""
        ...
