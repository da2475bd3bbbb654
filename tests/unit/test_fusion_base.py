"""Recall computes score fusion's shares once (fusion_base) for both of its rankings: the
result must be exactly what computing them in each ranking gives."""

from __future__ import annotations

import random

from tinycontext.domain.recall import (
    SCORE,
    Candidate,
    FusionWeights,
    fusion_base,
    rank,
    score_fusion,
)


def pool(seed: int) -> list[Candidate]:
    rng = random.Random(seed)
    out = []
    for i in range(300):
        keyword = rng.random() < 0.6
        dense = not keyword or rng.random() < 0.5
        out.append(Candidate(
            f"m{i:03d}", f"2026-07-{rng.randint(1, 28):02d}T00:00:00Z",
            i + 1 if keyword else None, rng.uniform(0.5, 12.0) if keyword else None,
            i + 1 if dense else None,
            round(rng.uniform(-0.1, 0.9), 2) if rng.random() < 0.95 else None,  # ties too
            rng.randint(1, 40) if rng.random() < 0.3 else None,
        ))
    return out


def test_a_given_base_changes_nothing() -> None:
    weights = FusionWeights(0.5, 60, 0.1, SCORE, 0.4)
    for seed in range(5):
        candidates = pool(seed)
        dated = frozenset(c.memory_id for c in candidates[::17])
        late = {c.memory_id: random.Random(seed).uniform(0.1, 0.9) for c in candidates[:50]}
        base = fusion_base(candidates, weights, 9.5, dated)
        assert score_fusion(candidates, weights, late, 9.5, dated, base) == score_fusion(
            candidates, weights, late, 9.5, dated)
        for limit, given in ((50, None), (10, late)):
            assert rank(candidates, weights, 0.0, limit, given, 9.5, dated, base) == rank(
                candidates, weights, 0.0, limit, given, 9.5, dated)
        assert base == fusion_base(candidates, weights, 9.5, dated)  # not changed in place
