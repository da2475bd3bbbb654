"""Store port: durable memories with a keyword index and a cosine-similarity index."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from tinycontext.domain.labels import MemoryFilter
from tinycontext.domain.listing import ListQuery
from tinycontext.domain.memory import Memory

from .embedder import Vector


@dataclass(frozen=True, slots=True)
class NewMemory:
    """A memory to insert, with its vector and the key of the model that made it.

    `context_id`/`context`: the memory saved just before it in its session, whose words the
    keyword index holds beside the memory's own (at a lower weight) for recall.
    """

    memory: Memory
    vector: Vector | None
    context_id: str | None = None
    context: str | None = None
    tokens: bytes | None = None
    """Sign bits of the memory's content-token vectors, for late interaction (packed rows)."""


@dataclass(frozen=True, slots=True)
class Scope:
    """Live (not superseded) memories of one kind in one session, optionally filtered.

    `session_id` None with `exact` False means every session (recall without a session);
    with `exact` True it means only memories saved without a session (dedup's scope).
    """

    kind: str
    session_id: str | None = None
    exact: bool = False
    filters: MemoryFilter | None = None
    """Recall's filter (domain.labels): only matching memories are candidates, and with
    `as_of` the versions live then (superseded ones too) instead of the live ones."""


@dataclass(frozen=True, slots=True)
class Scored:
    """A memory and a retriever's score for it (BM25: higher is better; dense: cosine)."""

    memory: Memory
    score: float


@dataclass(frozen=True, slots=True)
class Page:
    memories: list[Scored]
    total_count: int


@runtime_checkable
class MemoryLog(Protocol):
    """Writing the log: inserts, supersedes, deletes and recall counts, each atomic."""

    def add(self, items: Sequence[NewMemory]) -> None:
        """Insert memories atomically (all or none); records their session as used."""
        ...

    def supersede(self, old_id: str, new: NewMemory, at: str) -> None:
        """Insert `new` and mark `old_id` superseded by it, atomically."""
        ...

    def delete(self, memory_id: str, predecessor_id: str | None, successor_id: str | None) -> None:
        """Remove a memory for good; re-point `predecessor_id` at `successor_id` (None = live).

        Memories that had it as context lose that context: their keyword context is cleared
        and their vector dropped, so nothing of the deleted text stays (the re-embedder
        makes their vector again without it)."""
        ...

    def mark_recalled(self, memory_ids: Sequence[str], at: str) -> None:
        """recall_count += 1 and last_recalled_at = at for each id."""
        ...


@runtime_checkable
class Retrieval(Protocol):
    """What recall and save's duplicate check read, bounded; ties newer first, then id;
    dense search only sees vectors made by `model_key`."""

    def keyword_search(
        self, groups: Sequence[Sequence[str]], scope: Scope, limit: int
    ) -> list[Scored]:
        """Live memories in scope matching ANY group (a group is a phrase), best BM25 first.

        Words match by stem (domain.text.stemmed_terms), in the memory's own text (weight 1)
        or its save-time context (weight domain.context.KEYWORD_CONTEXT_WEIGHT)."""
        ...

    def keyword_ideal(self, groups: Sequence[Sequence[str]]) -> float:
        """The keyword_search score a memory would get that holds each group once, at the
        average length of a memory: the sum of the groups' IDFs (0 without groups). Recall
        weighs keyword matches against it (domain.recall.score_fusion). This default, 0,
        means no scale: recall then weighs them against the best match, as before."""
        return 0.0

    def keyword_rarity(self, words: Sequence[str]) -> dict[str, float]:
        """The IDF (natural log, BM25's) of each given word, as the recall side of the keyword
        index holds it (folded and stemmed), over the whole store; words it holds nowhere are
        left out. Recall's pseudo-relevance feedback picks its words by it. This default, {},
        means the store cannot tell: recall then adds no feedback query."""
        return {}

    def indexed_words(self, memory_ids: Sequence[str]) -> dict[str, list[str]]:
        """Each given memory's own words as the recall side of the keyword index holds them
        (domain.text.stemmed_terms of its content, split; not its save-time context), for
        recall's feedback in hand, so that nothing is stemmed at recall. This default, {},
        means the store keeps no such words: recall then stems those memories' text itself
        (the same words, at a cost)."""
        return {}

    def nearest(self, vector: Vector, model_key: str, scope: Scope, limit: int) -> list[Scored]:
        """Live memories in scope by cosine similarity to `vector`, closest first."""
        ...

    def nearest_many(
        self, vectors: Sequence[Vector], model_key: str, scope: Scope, limit: int
    ) -> list[list[Scored]]:
        """`nearest` for each vector, in one call (a save's near-duplicate lookups). This
        default asks `nearest` once a vector; a store that can share work overrides it."""
        return [self.nearest(v, model_key, scope, limit) for v in vectors]

    def similarities(
        self, vector: Vector, model_key: str, memory_ids: Sequence[str]
    ) -> dict[str, float]:
        """Cosine of `vector` with each given memory's vector made by `model_key` (memories
        without one are left out): the dense score of keyword candidates the pool missed."""
        ...

    def contexts(self, memory_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        """Each given memory's save-time context memory, where it has one: (its id, content)."""
        ...

    def token_bits(self, memory_ids: Sequence[str]) -> dict[str, tuple[bytes, bytes | None]]:
        """For each given memory that has token bits: its own and its context memory's."""
        ...

    def latest(self, scope: Scope) -> Memory | None:
        """The newest live memory in scope (`exact` scopes: None means no session)."""
        ...


@runtime_checkable
class Browsing(Protocol):
    """Reading memories as they are: by id or ref, a page of a list, sessions, export pages."""

    def find(self, key: str, is_ref: bool) -> list[Memory]:
        """Memories whose id equals `key`, or whose ref equals it (several on a ref clash)."""
        ...

    def browse(self, query: ListQuery) -> Page:
        """A page of live memories for list_memories; with search, all groups must match and
        each one may be a prefix; score is the BM25 score when searching."""
        ...

    def session_exists(self, session_id: str) -> bool:
        """Whether any save ever used this session id."""
        ...

    def session_counts(self, limit: int) -> list[tuple[str, int]]:
        """Live memories per session, the `limit` largest sessions first (ties by name). This
        default, [], means the store cannot tell cheaply: the web UI then leaves them out."""
        return []

    def export_page(
        self, after: int, limit: int, session_id: str | None
    ) -> list[tuple[int, Memory, Vector | None]]:
        """Every memory (superseded too) after cursor `after` in insertion order, with its
        vector and its own cursor value; start with 0. For streaming export."""
        ...


@runtime_checkable
class EmbeddingUpkeep(Protocol):
    """Re-embedding and index upkeep, a bounded step at a time (the background re-embedder)."""

    def pending_embeddings(self, model_key: str, limit: int) -> list[Memory]:
        """Memories whose vector is missing or was made by another model (any lifecycle)."""
        ...

    def count_pending_embeddings(self, model_key: str) -> int:
        """How many memories `pending_embeddings` would eventually return."""
        ...

    def set_embeddings(
        self, vectors: Sequence[tuple[str, Vector]], model_key: str,
        tokens: Mapping[str, bytes] | None = None,
    ) -> None:
        """Store re-made vectors (and token bits) by memory id (ids deleted meanwhile are
        ignored)."""
        ...

    def maintain_index(self, model_key: str) -> bool:
        """One bounded step of background index upkeep; True while more remains."""
        ...


@runtime_checkable
class Diagnostics(Protocol):
    """Facts about the store for `doctor` and tests (driver, versions, sizes): no content."""

    def diagnostics(self) -> dict[str, Any]:
        """Named facts; which ones depends on the store."""
        ...


@runtime_checkable
class Store(MemoryLog, Retrieval, Browsing, EmbeddingUpkeep, Diagnostics, Protocol):
    """Every role at once, what the composition builds and the application core holds.

    Every read of ranked or scoped data is bounded: no method returns the whole store. The
    roles stay one store because some transactions span them (supersede, delete with chain
    repair write the log and the indexes retrieval reads).
    """

    def close(self) -> None:
        """Release connections and files; the store may be reopened by using it again."""
        ...
