"""Recall's two retrievers asked one at a time, for evaluations and benchmarks.

Recall fuses what a keyword (BM25) search and a dense (cosine) search each hand over. These
helpers ask each alone, with the scope and candidate pool recall itself uses, so a test or an
evaluation can see what either found before the fusion, or time a store's search alone:

    from tinycontext.testing.retrievers import recall_scope, retrievers_alone

    found = retrievers_alone(service, "When do staging deploys run?", recall_scope("ops"))
    print([hit.memory.id for hit in found.dense], [hit.memory.id for hit in found.keyword])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from tinycontext.domain.filters import build_filter
from tinycontext.domain.memory import EPISODIC
from tinycontext.domain.recall import candidate_pool
from tinycontext.domain.text import recall_terms
from tinycontext.ports.embedder import Embedder
from tinycontext.ports.store import Scope, Scored, Store


class RecallSettings(Protocol):
    """The two settings the helpers read (a TinyContextConfig has them)."""

    @property
    def recall_top_k(self) -> int: ...

    @property
    def dense_query_prefix(self) -> str: ...


class Searchable(Protocol):
    """What the helpers read of a service (a MemoryService from build_service is one)."""

    @property
    def store(self) -> Store: ...

    @property
    def embedder(self) -> Embedder: ...

    @property
    def model_key(self) -> str: ...

    @property
    def config(self) -> RecallSettings: ...


@dataclass(frozen=True, slots=True)
class Retrieved:
    """Each retriever's candidates for one query, best first in its own order."""

    dense: list[Scored]
    keyword: list[Scored]


def pool_size(service: Searchable, top_k: int | None = None) -> int:
    """How many candidates each retriever hands recall's fusion for `top_k` results (the
    service's `recall_top_k` when None)."""
    return candidate_pool(service.config.recall_top_k if top_k is None else top_k)


def recall_scope(
    session_id: str | None = None, *, tags: Sequence[str] | None = None,
    metadata: Mapping[str, Any] | None = None, since: str | None = None,
    until: str | None = None, as_of: str | None = None,
) -> Scope:
    """The memories recall searches: live episodic ones of the session (every session when
    None), filtered as `recall_memories` with these arguments would; bad filters raise the
    same TinyContextError recall does."""
    filters = build_filter(tags, metadata, since, until, as_of)
    return Scope(EPISODIC, session_id, filters=filters or None)


def keyword_groups(query: str) -> list[list[str]]:
    """The word groups recall hands a store's `keyword_search` for `query`."""
    return recall_terms(query)


def retrievers_alone(
    service: Searchable, query: str, scope: Scope | None = None, top_k: int | None = None,
) -> Retrieved:
    """What the dense and the keyword search each return for `query` from recall's pool
    (nothing is counted as recalled)."""
    scope = recall_scope() if scope is None else scope
    pool = pool_size(service, top_k)
    vector = service.embedder.embed([service.config.dense_query_prefix + query])[0]
    return Retrieved(
        dense=service.store.nearest(vector, service.model_key, scope, pool),
        keyword=service.store.keyword_search(keyword_groups(query), scope, pool),
    )
