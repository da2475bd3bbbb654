"""The two retrievers' hits as fusion reads them."""

from __future__ import annotations

from collections.abc import Sequence

from tinycontext.domain.memory import Memory
from tinycontext.domain.recall import Candidate
from tinycontext.ports.store import Scored

Positions = dict[str, tuple[int, float]]
DensePositions = dict[str, tuple[int | None, float]]


def positions(
    lexical: Sequence[Scored], dense: Sequence[Scored],
) -> tuple[dict[str, Memory], Positions, DensePositions]:
    """Each memory once, keyword hits first (the candidates' order decides which of two
    equal cosines takes the dense lead: domain.recall.dense_lead), and each retriever's
    1-based position and score of it."""
    memories: dict[str, Memory] = {}
    bm25: Positions = {}
    for position, hit in enumerate(lexical, start=1):
        memories[hit.memory.id] = hit.memory
        bm25[hit.memory.id] = (position, hit.score)
    cosines: DensePositions = {}
    for position, hit in enumerate(dense, start=1):
        memories[hit.memory.id] = hit.memory
        cosines[hit.memory.id] = (position, hit.score)
    return memories, bm25, cosines


def fusion_candidates(
    memories: dict[str, Memory], bm25: Positions, cosines: DensePositions,
    access: dict[str, int] | None = None,
) -> list[Candidate]:
    """One fusion candidate per memory, in `memories`' order, with what each retriever
    (and, when given, the recall-count ranking) said of it."""
    ranks = access or {}
    candidates = []
    for mid, m in memories.items():
        keyword_rank, keyword_score = bm25.get(mid, (None, None))
        dense_rank, dense_score = cosines.get(mid, (None, None))
        candidates.append(Candidate(mid, m.created_at, keyword_rank, keyword_score,
                                    dense_rank, dense_score, ranks.get(mid)))
    return candidates
