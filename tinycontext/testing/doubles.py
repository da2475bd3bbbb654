"""Deterministic doubles of the Clock, Tokenizer and (token) Embedder ports. They pass the
same contract suites as the adapters (tests/contract/) and need no model or network."""

from __future__ import annotations

import hashlib
import math
from array import array
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from tinycontext.domain.text import STOPWORDS, keyword_groups
from tinycontext.ports.clock import Clock
from tinycontext.ports.embedder import Vector
from tinycontext.ports.token_embedder import MAX_TOKEN_ROWS, TokenEmbedder, TokenRows
from tinycontext.ports.tokenizer import Tokenizer


class FixedClock(Clock):
    """Starts at a fixed instant; `advance` moves it."""

    def __init__(self, start: datetime | None = None) -> None:
        self.current = start or datetime(2026, 7, 31, 10, 15, tzinfo=UTC)

    def now(self) -> datetime:
        return self.current

    def advance(self, seconds: float = 1.0) -> None:
        self.current += timedelta(seconds=seconds)


class WordTokenizer(Tokenizer):
    """One token per whitespace-separated word: easy to reason about in unit tests."""

    name = "words"

    def count(self, text: str) -> int:
        return len(text.split())


class HashEmbedder(TokenEmbedder):
    """Bag of hashed words: texts sharing words are close, unrelated ones near orthogonal.

    Token rows: one per word, a pseudo-random +-1 pattern of the word (so equal words match
    exactly, other words near 0, also after sign quantisation)."""

    def __init__(self, dimensions: int = 64, key: str = "hash-64") -> None:
        self._dimensions, self._key = dimensions, key
        self.calls = 0

    @property
    def model_key(self) -> str:
        return self._key

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def _one(self, text: str) -> Vector:
        values = [0.0] * self._dimensions
        for group in keyword_groups(text) or [["\u2205"]]:
            for word in group:
                digest = hashlib.sha256(word.encode()).digest()
                values[digest[0] % self._dimensions] += 1.0 if digest[1] % 2 else -1.0
        norm = math.sqrt(sum(v * v for v in values)) or 1.0
        return array("f", [v / norm for v in values]).tobytes()

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        self.calls += 1
        return [self._one(t) for t in texts]

    @property
    def has_tokens(self) -> bool:
        return True

    def _word_row(self, word: str) -> list[float]:
        bits: list[int] = []
        counter = 0
        while len(bits) < self._dimensions:
            digest = hashlib.sha256(f"{word}/{counter}".encode()).digest()
            bits += [(byte >> k) & 1 for byte in digest for k in range(8)]
            counter += 1
        scale = 1.0 / math.sqrt(self._dimensions)
        return [scale if b else -scale for b in bits[: self._dimensions]]

    def embed_with_tokens(
        self, texts: Sequence[str], drop_stopwords: bool
    ) -> list[tuple[Vector, TokenRows]]:
        self.calls += 1
        out = []
        for text in texts:
            words = [w for g in keyword_groups(text) for w in g]
            kept = [w for w in words if not (drop_stopwords and w in STOPWORDS)]
            rows = [self._word_row(w) for w in (kept or words[:1] or ["\u2205"])[:MAX_TOKEN_ROWS]]
            out.append((self._one(text), array("f", [v for r in rows for v in r]).tobytes()))
        return out
