"""Embedder port: text in, unit-length float32 vectors out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

Vector = bytes
"""A float32 little-endian vector packed as bytes (4 x dimensions long), L2-normalised."""


@runtime_checkable
class Embedder(Protocol):
    @property
    def model_key(self) -> str:
        """Stable identity of the model; a change means stored vectors must be rebuilt."""
        ...

    @property
    def dimensions(self) -> int:
        """Length of every vector this embedder returns."""
        ...

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        """One L2-normalised float32 vector per text, same order; a batch equals single calls."""
        ...
