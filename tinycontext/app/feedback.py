"""Recall's pseudo-relevance feedback (domain.feedback) over the store's ports: the second
keyword query, and the re-weighing of the candidates in hand."""

from __future__ import annotations

from collections.abc import Sequence, Set
from functools import lru_cache

from tinycontext.domain.feedback import (
    FEEDBACK_DOCS,
    INHAND_DEPTH,
    feedback_candidates,
    feedback_shares,
    feedback_terms,
    held_shares,
)
from tinycontext.domain.memory import Memory
from tinycontext.domain.recall import Candidate, FusionWeights, rank
from tinycontext.domain.stemming import stem
from tinycontext.domain.text import STOPWORDS, fold, stem_groups, stemmed_terms
from tinycontext.ports.store import Scope

from .core import Core

# The feedback query's own pool: it adds a few candidates, it does not re-rank the store.
FEEDBACK_POOL = 50


@lru_cache(maxsize=1)
def _stopword_stems() -> frozenset[str]:
    return frozenset(stem(fold(w)) for w in STOPWORDS) | STOPWORDS


def feedback_pass(
    core: Core, terms: Sequence[Sequence[str]], scope: Scope, vector: bytes,
    candidates: list[Candidate], memories: dict[str, Memory], weights: FusionWeights,
    ideal: float, dated: Set[str],
) -> dict[str, float]:
    """Run the feedback query and add its matches that neither retriever found to
    `candidates` and `memories` (with their real cosine); returns each feedback match's
    keyword share (domain.feedback.feedback_shares), {} when there is nothing to add."""
    best = rank(candidates, weights, limit=FEEDBACK_DOCS, keyword_ideal=ideal, dated=dated)
    documents = [stemmed_terms(memories[r.memory_id].content).split() for r in best]
    asked = {w for g in stem_groups([list(g) for g in terms]) for w in g}
    words = feedback_candidates(documents, asked, _stopword_stems())
    if not words:
        return {}
    expansion = feedback_terms(documents, core.store.keyword_rarity(words),
                               [r.rrf for r in best])
    if not expansion:
        return {}
    groups = [*terms, *([w] for w in expansion)]
    hits = core.store.keyword_search(groups, scope, FEEDBACK_POOL)
    if not hits:
        return {}
    fresh = [h.memory for h in hits if h.memory.id not in memories]
    if fresh:
        cosines = core.store.similarities(vector, core.model_key, [m.id for m in fresh])
        for m in fresh:
            memories[m.id] = m
            candidates.append(Candidate(m.id, m.created_at, dense=cosines.get(m.id)))
    return feedback_shares({h.memory.id: h.score for h in hits},
                           core.store.keyword_ideal(groups))


def inhand_pass(
    core: Core, terms: Sequence[Sequence[str]], candidates: Sequence[Candidate],
    memories: dict[str, Memory], weights: FusionWeights, base: Sequence[float],
) -> dict[str, float]:
    """Feedback without a second query: the expansion words of the best three candidates
    (as the feedback query picks them), then each of the INHAND_DEPTH best candidates' share
    of the question's and those words' IDF (domain.feedback.held_shares); {} when the best
    ones offer no word rare enough. `base`: the candidates' fusion_base. The words come
    from the keyword index (Retrieval.indexed_words); a memory the store has none for is
    stemmed here."""
    best = rank(candidates, weights, limit=INHAND_DEPTH, base=base)
    ids = [r.memory_id for r in best]
    indexed = core.store.indexed_words(ids)
    documents = {mid: indexed[mid] if mid in indexed
                 else stemmed_terms(memories[mid].content).split() for mid in ids}
    top = [documents[r.memory_id] for r in best[:FEEDBACK_DOCS]]
    asked = {w for g in stem_groups([list(g) for g in terms]) for w in g}
    words = feedback_candidates(top, asked, _stopword_stems())
    if not words:
        return {}
    # One look-up for both: the question's words are usually counted already.
    idf = core.store.keyword_rarity([*words, *sorted(asked)])
    expansion = feedback_terms(top, idf, [r.rrf for r in best[:FEEDBACK_DOCS]])
    if not expansion:
        return {}
    return held_shares({mid: set(words) for mid, words in documents.items()}, idf,
                       [*sorted(asked), *expansion])
