"""Helpers shared by the service unit tests."""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from typing import Any

from tinycontext.app.service import MemoryService
from tinycontext.ports.embedder import Embedder, Vector

# WordTokenizer counts MCP's recall frame around each memory (adapters/mcp/frame.py) as 6 words:
# <memory / index=.. / ref=.. / relevance=.. / created_at=..> / </memory>
FRAME = 6


class TableEmbedder(Embedder):
    """2-d unit vectors chosen per text: text -> angle, so cosine similarities are exact."""

    def __init__(self, similarity_to_base: dict[str, float], key: str = "table") -> None:
        self._sims, self._key = similarity_to_base, key

    @property
    def model_key(self) -> str:
        return self._key

    @property
    def dimensions(self) -> int:
        return 2

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        out = []
        for text in texts:
            cos = self._sims.get(text, 0.0)
            out.append(array("f", [cos, math.sqrt(max(0.0, 1 - cos * cos))]).tobytes())
        return out


def save(service: MemoryService, *contents: str, session_id: str | None = None,
         kind: str = "episodic") -> list[dict[str, Any]]:
    """Save each content (one call each, so dedup across items does not interfere)."""
    out = []
    for content in contents:
        out += service.save([{"content": content, "kind": kind}],
                            session_id=session_id).to_dict()["saved"]
    return out
