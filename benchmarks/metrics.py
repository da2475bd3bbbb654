"""Retrieval and latency metrics used by the benchmarks. Pure functions, unit-tested.

A ranked result is a sequence of *covers*: for each retrieved item, the set of gold labels it
stands for. Usually one label (a LoCoMo turn id, a session id); more when deduplication folded
several inputs into one stored memory, so the one memory credits every input it replaced.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Sequence
from typing import Any

Covers = Sequence[Collection[str]]

_EVIDENCE = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")


def parse_locomo_evidence(raw: Iterable[str] | str | None) -> list[str]:
    """Normalised LoCoMo dialog ids (`D<session>:<turn>`, no leading zeros), in order, unique.

    Tolerates the malformed ids of the published file: several ids in one string
    (`D8:6; D9:17`, `D9:1 D4:4`), a stray colon (`D:11:26`), zero padding (`D30:05`);
    fragments with no session and turn number (`D`) are dropped.
    """
    if raw is None:
        return []
    items = [raw] if isinstance(raw, str) else list(raw)
    out: list[str] = []
    for item in items:
        for session, turn in _EVIDENCE.findall(str(item)):
            label = f"D{int(session)}:{int(turn)}"
            if label not in out:
                out.append(label)
    return out


def _check(relevant: Collection[str], k: int) -> None:
    if not relevant:
        raise ValueError("no relevant labels: the question cannot be scored")
    if k < 1:
        raise ValueError("k must be at least 1")


def covered(ranked: Covers, k: int) -> set[str]:
    """Every label credited by the first k retrieved items."""
    labels: set[str] = set()
    for cover in ranked[:k]:
        labels.update(cover)
    return labels


def recall_at_k(ranked: Covers, relevant: Collection[str], k: int) -> float:
    """Share of the relevant labels credited within the first k items."""
    _check(relevant, k)
    gold = set(relevant)
    return len(gold & covered(ranked, k)) / len(gold)


def hit_at_k(ranked: Covers, relevant: Collection[str], k: int) -> float:
    """1.0 when at least one relevant label is credited within the first k items."""
    _check(relevant, k)
    return 1.0 if set(relevant) & covered(ranked, k) else 0.0


def recall_all_at_k(ranked: Covers, relevant: Collection[str], k: int) -> float:
    """1.0 when every relevant label is credited within the first k items (LongMemEval)."""
    return 1.0 if recall_at_k(ranked, relevant, k) == 1.0 else 0.0


def recall_any_at_k(ranked: Covers, relevant: Collection[str], k: int) -> float:
    """LongMemEval's name for hit@k."""
    return hit_at_k(ranked, relevant, k)


def reciprocal_rank(ranked: Covers, relevant: Collection[str], k: int | None = None) -> float:
    """1 / rank of the first item crediting a relevant label (0.0 when none in the first k)."""
    _check(relevant, k or 1)
    gold = set(relevant)
    for rank, cover in enumerate(ranked[:k] if k else ranked, start=1):
        if gold.intersection(cover):
            return 1.0 / rank
    return 0.0


def ndcg_at_k(ranked: Covers, relevant: Collection[str], k: int) -> float:
    """Binary-gain NDCG@k.

    An item gains 1 when it credits a relevant label not credited earlier, else 0:
    DCG = sum over ranks i <= k of gain_i / log2(i + 1); the ideal puts a gain at each of the
    first min(|relevant|, k) ranks, so the value stays within 0..1 even when one item credits
    several labels.
    """
    _check(relevant, k)
    gold = set(relevant)
    seen: set[str] = set()
    dcg = 0.0
    for rank, cover in enumerate(ranked[:k], start=1):
        new = (gold & set(cover)) - seen
        if new:
            seen |= new
            dcg += 1.0 / math.log2(rank + 1)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(len(gold), k) + 1))
    return dcg / ideal


def collapse(ranked: Covers) -> list[list[str]]:
    """Turn-level covers to a ranking of distinct labels (e.g. sessions), first occurrence wins.

    A turn crediting several labels (dedup) contributes them in sorted order.
    """
    seen: set[str] = set()
    out: list[list[str]] = []
    for cover in ranked:
        for label in sorted(cover):
            if label not in seen:
                seen.add(label)
                out.append([label])
    return out


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) with linear interpolation between closest ranks."""
    if not values:
        raise ValueError("no values")
    if not 0 <= q <= 100:
        raise ValueError("q must be within 0..100")
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100.0
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def mean(values: Sequence[float]) -> float:
    """Arithmetic mean; 0.0 for no values (an empty group reports 0 with n = 0)."""
    return sum(values) / len(values) if values else 0.0


class Scoreboard:
    """Collects per-question metric values by group and reports means."""

    def __init__(self) -> None:
        self._values: dict[str, dict[str, list[float]]] = {}

    def add(self, groups: Iterable[str], metrics: dict[str, float]) -> None:
        for group in groups:
            bucket = self._values.setdefault(group, {})
            for name, value in metrics.items():
                bucket.setdefault(name, []).append(value)

    def groups(self) -> list[str]:
        return list(self._values)

    def count(self, group: str) -> int:
        bucket = self._values.get(group, {})
        return len(next(iter(bucket.values()), []))

    def means(self, group: str) -> dict[str, float]:
        return {name: mean(vals) for name, vals in self._values.get(group, {}).items()}


def overlap_at_k(matrix: Any, count: int, query: bytes, approx: list[int], k: int) -> float:
    """Share of the exact top k that the approximate list found; ties at the k-th exact score
    count as found (any of the tied rows is an equally correct answer)."""
    import numpy as np

    scores = matrix[:count] @ np.frombuffer(query, dtype=np.float32)
    k = min(k, count)
    kth = float(np.partition(-scores, k - 1)[k - 1]) * -1.0
    found = sum(1 for row in approx[:k] if scores[row] >= kth - 1e-6)
    return found / k
