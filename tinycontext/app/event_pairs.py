"""Recall's event-pair step (domain.events) over the store's ports: each event of a question
about two events in time is looked up on its own, and the best memory of each joins the
first slots.

Only a question that domain.events.event_pair splits comes here; every other recall is
left exactly as it was. Each event's lookup is a small recall of its own: its keyword and
dense searches (FACET_POOL each, in the same scope and filters as the question's), fused
with the question's weights, without late interaction or date cues. The second event's
memory is taken from another moment than the first's when one of its best few is (another
session, or created more than `recall_spread_minutes` apart): the two events of such a
question were usually told at different times, and a near neighbour of the first event is
what the question's own ranking already offers.
"""

from __future__ import annotations

from collections.abc import Sequence

from tinycontext.domain.events import EventPair, missing_events, with_pair
from tinycontext.domain.memory import Memory
from tinycontext.domain.recall import SCORE, FusionWeights, Ranked, rank
from tinycontext.domain.spread import moment_of, same_moment
from tinycontext.domain.text import recall_terms
from tinycontext.ports.store import Scope, Scored

from .core import Core
from .hits import fusion_candidates, positions

# Each event's own pools: it needs the event's best few memories, not a ranking of the store.
FACET_POOL = 50
# How many of the second event's best memories may stand in for its best when that one
# shares the first event's moment.
FACET_CHOICES = 5


def _facet_ranking(
    core: Core, lexical: Sequence[Scored], ideal: float, dense: Sequence[Scored],
    vector: bytes, weights: FusionWeights, memories: dict[str, Memory],
) -> list[Ranked]:
    found, bm25, cosines = positions(lexical, dense)
    missing = [mid for mid in bm25 if mid not in cosines]
    if missing and weights.method == SCORE:
        for mid, similarity in core.store.similarities(vector, core.model_key, missing).items():
            cosines[mid] = (None, similarity)
    candidates = fusion_candidates(found, bm25, cosines)
    for mid, m in found.items():
        memories.setdefault(mid, m)
    return rank(candidates, weights, limit=FACET_CHOICES, keyword_ideal=ideal)


def with_event_pair(
    core: Core, pair: EventPair, scope: Scope, ranked: Sequence[Ranked],
    memories: dict[str, Memory], weights: FusionWeights, limit: int,
) -> list[Ranked]:
    """`ranked` (the question's ranking, best first) cut to `limit`; an event whose best
    memory is not in it gets that memory right after the best result
    (domain.events.missing_events, with_pair). Memories the events' lookups found are added
    to `memories`; such a memory carries its event's scores."""
    texts = (pair.first, pair.second)
    scored = weights.method == SCORE

    def keyword_side(text: str) -> tuple[list[Scored], float]:
        terms = recall_terms(text)
        if not terms:
            return [], 0.0
        hits = core.store.keyword_search(terms, scope, FACET_POOL)
        return hits, core.store.keyword_ideal(terms) if scored else 0.0

    keyword = [core.background_call(keyword_side, text) for text in texts]
    vectors = core.embedder.embed([core.config.dense_query_prefix + t for t in texts])
    facets = []
    for vector, pending in zip(vectors, keyword, strict=True):
        dense = core.store.nearest(vector, core.model_key, scope, FACET_POOL)
        lexical, ideal = pending.result()
        facets.append(_facet_ranking(core, lexical, ideal, dense, vector, weights, memories))
    window = 60.0 * core.config.recall_spread_minutes

    def apart(a: str, b: str) -> bool:
        first, second = memories[a], memories[b]
        return not same_moment(moment_of(first.session_id, first.created_at),
                               moment_of(second.session_id, second.created_at), window)

    order = [r.memory_id for r in ranked]
    needed = missing_events(order[:limit], [r.memory_id for r in facets[0]],
                            [r.memory_id for r in facets[1]], apart)
    by_id = {r.memory_id: r for facet in facets for r in facet}
    by_id.update((r.memory_id, r) for r in ranked)
    return [by_id[mid] for mid in with_pair(order, needed, limit)]
