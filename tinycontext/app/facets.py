"""Recall's facet coverage step (domain.facets) over the store's ports: the question's words
the first results lack go to later slots' candidates from other moments that hold them.

The candidates' words are their own content's as the keyword index holds them
(Retrieval.indexed_words; a store that keeps none has them stemmed here), without the
save-time context the index adds: a word a memory only borrows from its neighbours is not a
part of the question that memory answers. The words' rarity comes from the keyword side's
counts, which already hold the question's words.
"""

from __future__ import annotations

from collections.abc import Sequence

from tinycontext.domain.facets import cover_facets, facet_matches, group_rarity
from tinycontext.domain.memory import Memory
from tinycontext.domain.recall import Ranked
from tinycontext.domain.spread import moment_of
from tinycontext.domain.text import stem_groups, stemmed_terms

from .core import Core


def with_facets(
    core: Core, terms: Sequence[Sequence[str]], ranked: Sequence[Ranked],
    memories: dict[str, Memory], k: int,
) -> list[Ranked]:
    """The first `k` of `ranked` (best first, deeper than k) in facet-coverage order."""
    groups = stem_groups([list(g) for g in terms])
    if len(ranked) <= 1 or not groups:
        return list(ranked[:k])
    rarity = core.store.keyword_rarity(sorted({w for g in groups for w in g}))
    picked = [memories[r.memory_id] for r in ranked]
    indexed = core.store.indexed_words([m.id for m in picked])
    words = [frozenset(indexed[m.id] if m.id in indexed else stemmed_terms(m.content).split())
             for m in picked]
    order = cover_facets(
        [r.rrf for r in ranked], facet_matches(groups, words),
        group_rarity(groups, rarity),
        [moment_of(m.session_id, m.created_at) for m in picked],
        core.config.recall_facet_weight, 60.0 * core.config.recall_spread_minutes, k,
    )
    return [ranked[i] for i in order]
