"""The two recall modes and the profile pool (SPEC section 2 and 3) over the service's ports."""

from __future__ import annotations

from dataclasses import replace

from tinycontext.domain import listing
from tinycontext.domain.dates import dated_ids
from tinycontext.domain.errors import StoreError, StoreReadOnlyError
from tinycontext.domain.events import event_pair
from tinycontext.domain.feedback import reweigh
from tinycontext.domain.labels import MemoryFilter
from tinycontext.domain.memory import EPISODIC, PROFILE
from tinycontext.domain.moments import moment_prior, moment_runs
from tinycontext.domain.recall import (
    LATE_DEPTH,
    SCORE,
    FusionWeights,
    budget_walk,
    candidate_pool,
    fusion_base,
    rank,
)
from tinycontext.domain.spread import SPREAD_DEPTH, moment_of, spread
from tinycontext.domain.text import recall_terms
from tinycontext.ports.store import Scope, Scored

from .core import Core
from .event_pairs import with_event_pair
from .facets import with_facets
from .feedback import feedback_pass, inhand_pass
from .hits import fusion_candidates, positions
from .rendering import Framing
from .results import ProfileItem, RecalledItem, RecallResult, Scores, metadata_of
from .vectors import maxsim

PROFILE_POOL_LIMIT = 200


def recent_recall(
    core: Core, session: str | None, budget: int, k: int, now: str,
    framing: Framing, filters: MemoryFilter | None = None,
) -> RecallResult:
    """The newest live episodic memories that fit the budget (no embedding, no counting)."""
    query = listing.build_list_query(session, EPISODIC, None, None, k, 0, "recent", None)
    if filters:
        query = listing.with_filter(query, filters)
    page = core.store.browse(query)
    picked = [s.memory for s in page.memories[:k]]
    cut = budget_walk([core.cost(m, framing) for m in picked], budget)
    return RecallResult(
        current_time=now, mode="recent",
        memories=tuple(
            RecalledItem(
                rank=i + 1, content_tokens=m.content_tokens, created_at=m.created_at,
                id=m.id, ref=m.ref, content=m.content, tags=m.tags,
                metadata=metadata_of(m.metadata),
            )
            for i, m in enumerate(picked[: cut.count])
        ),
        total_tokens=cut.total_tokens, truncated=cut.truncated, matched_count=len(picked),
    )

def semantic_recall(
    core: Core, query: str, session: str | None, budget: int, k: int, now: str,
    count: bool, framing: Framing, filters: MemoryFilter | None = None,
) -> RecallResult:
    """Hybrid retrieval (keyword + dense, fused, late interaction), then top_k and the budget;
    the chosen memories are counted as recalled unless `count` is False. Both retrievers
    see only memories that pass `filters`."""
    pool = candidate_pool(k)
    scope = Scope(EPISODIC, session, filters=filters)
    # The keyword side needs no vector: run it while the query is embedded (both release
    # the GIL: SQLite and onnxruntime work in C).
    terms = recall_terms(query)
    scored = core.config.recall_fusion == SCORE

    def keyword_side() -> tuple[list[Scored], float]:
        hits = core.store.keyword_search(terms, scope, pool)
        return hits, core.store.keyword_ideal(terms) if scored else 0.0

    keyword = core.background_call(keyword_side)
    text = core.config.dense_query_prefix + query
    query_tokens = b""
    if core.late_interaction:  # the token states come from the same model run
        [(vector, query_tokens)] = core.embedder.embed_with_tokens([text], False)  # type: ignore[attr-defined]
    else:
        vector = core.embedder.embed([text])[0]
    # Score fusion reads every candidate's cosine: those only the keyword side found get
    # theirs from the store (rank fusion has no use for it). Which ones the dense side misses
    # is known only after it ran, so every keyword hit's cosine is read beside the dense
    # search on a helper thread, as soon as the keyword side is done, which keeps that read
    # (small in SQLite, larger for a big PostgreSQL tenant) off the recall's path.
    def keyword_cosines() -> dict[str, float]:
        # The pool's queue is first in, first out and the keyword task was queued before
        # this one, so it is running or done: this wait cannot starve it.
        hits = keyword.result()[0]
        return core.store.similarities(
            vector, core.model_key, [h.memory.id for h in hits]
        ) if hits else {}

    cosines = core.background_call(keyword_cosines) if scored else None
    dense = core.store.nearest(vector, core.model_key, scope, pool)
    lexical, ideal = keyword.result()
    memories, bm25, dense_hits = positions(lexical, dense)
    if cosines is not None:
        for mid, similarity in cosines.result().items():
            if mid not in dense_hits:
                dense_hits[mid] = (None, similarity)
    access: dict[str, int] = {}
    if core.config.recall_access_weight > 0:
        # Competition ranking: equal recall counts share a rank, so ids never break ties here.
        counts = sorted((m.recall_count for m in memories.values()), reverse=True)
        first: dict[int, int] = {}
        # (`times`, not `count`: that name is the flag that says whether to count recalls.)
        for position, times in enumerate(counts, start=1):
            first.setdefault(times, position)
        access = {mid: first[m.recall_count] for mid, m in memories.items()}
    candidates = fusion_candidates(memories, bm25, dense_hits, access)
    weights = FusionWeights(
        core.config.recall_dense_weight, core.config.recall_rrf_k,
        core.config.recall_access_weight, core.config.recall_fusion,
        core.config.recall_keyword_weight, core.config.recall_feedback_weight,
        core.config.recall_dense_lead_weight, core.config.recall_date_cue_weight,
    )
    # Memories inside the period the question names, if it names one (cheap otherwise).
    dated = dated_ids(
        query, now, ((mid, m.content, m.created_at) for mid, m in memories.items())
    ) if scored else frozenset()
    shares: dict[str, float] = {}
    if scored and weights.feedback > 0 and candidates:
        with core.stage("feedback"):
            known = set(memories)
            shares = feedback_pass(core, terms, scope, vector, candidates, memories, weights,
                                   ideal, dated)
            if len(memories) > len(known):
                dated = dated | dated_ids(query, now, (
                    (mid, m.content, m.created_at) for mid, m in memories.items()
                    if mid not in known))
    # Score fusion's shares are computed once for both rankings (before and after MaxSim).
    base = fusion_base(candidates, weights, ideal, dated, shares) if scored else None
    inhand = core.config.recall_feedback_inhand_weight
    if base is not None and inhand > 0 and candidates:
        with core.stage("feedback_inhand"):
            held = inhand_pass(core, terms, candidates, memories, weights, base)
            base = reweigh(base, [c.memory_id for c in candidates], held, inhand)
    moment_weight = core.config.recall_moment_weight
    if base is not None and moment_weight > 0 and candidates:
        with core.stage("moment_prior"):
            runs = moment_runs(
                [memories[c.memory_id].session_id for c in candidates],
                [c.created_at for c in candidates], 60.0 * core.config.recall_spread_minutes)
            base = moment_prior(base, runs, moment_weight,
                                lifted=core.config.recall_moment_lifted or len(base))
    late = None
    if query_tokens:
        with core.stage("late_interaction"):
            shortlist = [r.memory_id for r in rank(
                candidates, weights, limit=LATE_DEPTH, keyword_ideal=ideal, dated=dated,
                base=base)]
            late = maxsim(query_tokens, core.store.token_bits(shortlist),
                          core.embedder.dimensions)
    spreading = core.config.recall_spread_weight
    facets = scored and core.config.recall_facet_weight > 0
    with core.stage("rank"):
        ranked = rank(candidates, weights, core.config.recall_rrf_cutoff,
                      limit=max(k, SPREAD_DEPTH) if spreading or facets else k, late=late,
                      keyword_ideal=ideal, dated=dated, base=base)
        if spreading:
            ranked = spread(
                ranked, [r.rrf for r in ranked],
                [moment_of(memories[r.memory_id].session_id, memories[r.memory_id].created_at)
                 for r in ranked],
                spreading, 60.0 * core.config.recall_spread_minutes,
                len(ranked) if facets else k,
            )
        if facets:
            with core.stage("facets"):
                ranked = with_facets(core, terms, ranked, memories, k)
        # A question about two events in time ("which came first, X or Y"): each event's
        # best memory joins the first slots. Any other question: only this string check.
        pair = event_pair(query) if core.config.recall_event_pairs else None
        if pair is not None:
            with core.stage("event_pairs"):
                ranked = with_event_pair(core, pair, scope, ranked, memories, weights, k)
        cut = budget_walk([core.cost(memories[r.memory_id], framing) for r in ranked], budget)
    chosen = ranked[: cut.count]
    counting = count_recalls(core, [r.memory_id for r in chosen], now) if count else None
    return RecallResult(
        current_time=now, mode="semantic",
        memories=tuple(
            RecalledItem(
                rank=i, relevance=r.relevance,
                scores=Scores(
                    fused=r.rrf,
                    dense=None if r.dense is None else round(r.dense, 6),
                    bm25=None if r.bm25 is None else round(r.bm25, 6),
                ),
                content_tokens=memories[r.memory_id].content_tokens,
                created_at=memories[r.memory_id].created_at,
                id=r.memory_id, ref=memories[r.memory_id].ref,
                content=memories[r.memory_id].content,
                tags=memories[r.memory_id].tags,
                metadata=metadata_of(memories[r.memory_id].metadata),
            )
            for i, r in enumerate(chosen, start=1)
        ),
        total_tokens=cut.total_tokens, truncated=cut.truncated, matched_count=len(ranked),
        notice=counting,
    )

def count_recalls(core: Core, memory_ids: list[str], now: str) -> str | None:
    """Add one to each recalled memory's count; a store that cannot take the write (a
    read-only backup or mount, a full disk) still answers: the notice says what was skipped."""
    try:
        core.store.mark_recalled(memory_ids, now)
    except StoreReadOnlyError:
        return "The store is read-only, so recall counts were not updated."
    except StoreError as exc:
        return (
            f"Recall counts were not updated ({exc.code}): the store cannot be written right "
            "now; the recalled memories are unaffected. Run `tinycontext doctor` to see why."
        )
    return None


def historical_notice(as_of: str | None) -> str | None:
    """What marks an answer "as of" a past time as history."""
    if as_of is None:
        return None
    return (
        f"Historical view as of {as_of}: these are the versions that were current then; "
        "some may have been replaced since (recall without as_of for what holds now). "
        "Deleted memories are gone and never shown."
    )


def profile_pool(
    core: Core, framing: Framing, as_of: str | None = None
) -> tuple[ProfileItem, ...]:
    """The newest profile memories that fit `profile_max_tokens`, attached to every recall
    (with `as_of`, the profile as it was then)."""
    if core.config.profile_max_tokens == 0:
        return ()  # profiles switched off: no store read on every recall
    query = replace(listing.build_list_query(
        None, PROFILE, None, None, PROFILE_POOL_LIMIT, 0, "recent", None
    ), count=False)  # the total is never shown: not counted on every recall
    if as_of is not None:
        query = listing.with_filter(query, MemoryFilter(as_of=as_of))
    profiles = [s.memory for s in core.store.browse(query).memories]
    limit = core.config.profile_max_tokens
    cut = budget_walk([core.cost(m, framing) for m in profiles], limit)
    # Unlike recall results, an oversized profile is not attached alone: it rides along with
    # every recall, so the profile block never exceeds its own budget.
    count = cut.count if cut.total_tokens <= limit else 0
    return tuple(
        ProfileItem(
            id=m.id, ref=m.ref, content=m.content, content_tokens=m.content_tokens,
            created_at=m.created_at, tags=m.tags, metadata=metadata_of(m.metadata),
        )
        for m in profiles[:count]
    )
