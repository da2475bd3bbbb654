"""An in-memory Store: a list of rows with a small BM25 of its own. It passes the same
contract suite as the SQLite and PostgreSQL stores (tests/contract/), so a test of your
own code can run the real service over it without a file."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from tinycontext.domain.context import KEYWORD_CONTEXT_WEIGHT
from tinycontext.domain.errors import MemoryAlreadySupersededError
from tinycontext.domain.filters import passes
from tinycontext.domain.listing import ListQuery
from tinycontext.domain.memory import Memory, format_timestamp, format_timestamp_ceil, ref_of
from tinycontext.domain.text import (
    fold,
    keyword_groups,
    searchable_text,
    stem_groups,
    stemmed_terms,
)
from tinycontext.ports.embedder import Vector
from tinycontext.ports.store import NewMemory, Page, Scope, Scored, Store
from tinycontext.testing.bm25 import bm25, idf
from tinycontext.testing.matching import cosine, desc, matches_all, phrase_count


class InMemoryStore(Store):
    """A list of rows with a small BM25 of its own; thread-safe through one lock."""

    def __init__(self, keyword_context_weight: float = KEYWORD_CONTEXT_WEIGHT) -> None:
        """`keyword_context_weight`: the BM25 weight of a memory's save-time context
        against its own words in `keyword_search` (the real stores take it too)."""
        self._context_weight = keyword_context_weight
        self._rows: dict[str, tuple[int, Memory, Vector | None]] = {}
        self._sessions: set[str] = set()
        self._seq = 0
        self._lock = threading.RLock()
        self._context: dict[str, tuple[str, str]] = {}  # id -> (context id, context text)
        self._token_bits: dict[str, bytes] = {}

    def _live(self, scope: Scope) -> list[tuple[int, Memory, Vector | None]]:
        out = []
        for seq, m, v in self._rows.values():
            if not passes(m, scope.filters) or m.kind != scope.kind:
                continue
            if scope.session_id is not None and m.session_id != scope.session_id:
                continue
            if scope.session_id is None and scope.exact and m.session_id is not None:
                continue
            out.append((seq, m, v))
        return out

    def add(self, items: Sequence[NewMemory]) -> None:
        with self._lock:
            ids = [item.memory.id for item in items]
            if len(set(ids)) != len(ids) or any(i in self._rows for i in ids):
                raise ValueError("duplicate memory id")
            for item in items:
                self._seq += 1
                memory = item.memory
                if item.vector is None:
                    memory = replace(memory, embedding_model=None)
                self._rows[memory.id] = (self._seq, memory, item.vector)
                if item.context_id is not None:
                    self._context[memory.id] = (item.context_id, item.context or "")
                if item.tokens is not None:
                    self._token_bits[memory.id] = item.tokens
                if memory.session_id is not None:
                    self._sessions.add(memory.session_id)

    def find(self, key: str, is_ref: bool) -> list[Memory]:
        with self._lock:
            rows = sorted(self._rows.values(), key=lambda r: r[0])
            return [m for _, m, _ in rows if (ref_of(m.id) if is_ref else m.id) == key]

    @staticmethod
    def _tokens(memory: Memory) -> list[str]:
        return [fold(t) for g in keyword_groups(searchable_text(memory.content)) for t in g]

    def _bm25(
        self, groups: Sequence[Sequence[str]], docs: list[Memory], prefixes: bool = False,
        field: Callable[[Memory], list[str]] | None = None,
    ) -> dict[str, float]:
        tokenised = {m.id: (field or self._tokens)(m) for m in docs}
        return bm25([[fold(t) for t in g] for g in groups], tokenised, prefixes)

    def keyword_search(
        self, groups: Sequence[Sequence[str]], scope: Scope, limit: int
    ) -> list[Scored]:
        with self._lock:
            docs = [m for _, m, _ in self._live(scope)]
            stemmed = stem_groups([list(g) for g in groups if g])
            scores = self._bm25(stemmed, docs, field=lambda m: stemmed_terms(m.content).split())
            context = self._bm25(stemmed, docs, field=lambda m: stemmed_terms(
                self._context.get(m.id, ("", ""))[1]).split())
            for mid, value in context.items():
                scores[mid] = scores.get(mid, 0.0) + self._context_weight * value
            by_id = {m.id: m for m in docs}
            ordered = sorted(
                scores.items(), key=lambda kv: (-kv[1], desc(by_id[kv[0]].created_at), kv[0])
            )
            return [Scored(by_id[mid], s) for mid, s in ordered[:limit]]

    def keyword_ideal(self, groups: Sequence[Sequence[str]]) -> float:
        """Sum of the groups' IDFs over every memory (as FTS5 counts), as bm25.py weighs them."""
        with self._lock:
            docs = [stemmed_terms(m.content).split() for _, m, _ in self._rows.values()]
            n = len(docs) or 1
            total = 0.0
            for group in stem_groups([list(g) for g in groups if g]):
                folded = [fold(t) for t in group]
                total += idf(sum(1 for toks in docs if phrase_count(toks, folded, False)), n)
            return total

    def keyword_rarity(self, words: Sequence[str]) -> dict[str, float]:
        """Each word's IDF over every memory (as FTS5 counts), as bm25.py weighs them."""
        with self._lock:
            docs = [set(stemmed_terms(m.content).split()) for _, m, _ in self._rows.values()]
            n = len(docs) or 1
            out: dict[str, float] = {}
            for word in words:
                df = sum(1 for toks in docs if fold(word) in toks)
                if df:
                    out[word] = idf(df, n)
            return out

    def indexed_words(self, memory_ids: Sequence[str]) -> dict[str, list[str]]:
        """Each known memory's stemmed words, as its keyword search reads them."""
        with self._lock:
            return {mid: stemmed_terms(self._rows[mid][1].content).split()
                    for mid in memory_ids if mid in self._rows}

    def nearest(self, vector: Vector, model_key: str, scope: Scope, limit: int) -> list[Scored]:
        with self._lock:
            hits = [
                Scored(m, cosine(vector, v))
                for _, m, v in self._live(scope)
                if v is not None and m.embedding_model == model_key
            ]
            hits.sort(key=lambda s: (-s.score, desc(s.memory.created_at), s.memory.id))
            return hits[:limit]

    def similarities(
        self, vector: Vector, model_key: str, memory_ids: Sequence[str]
    ) -> dict[str, float]:
        with self._lock:
            out = {}
            for mid in memory_ids:
                row = self._rows.get(mid)
                if row is not None and row[2] is not None and row[1].embedding_model == model_key \
                        and len(row[2]) == len(vector):
                    out[mid] = cosine(vector, row[2])
            return out

    def latest(self, scope: Scope) -> Memory | None:
        with self._lock:
            live = self._live(scope)
            return max(live, key=lambda r: (r[1].created_at, r[0]))[1] if live else None

    def contexts(self, memory_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        with self._lock:
            out = {}
            for mid in memory_ids:
                context_id = self._context.get(mid, (None, ""))[0]
                if context_id in self._rows:
                    out[mid] = (context_id, self._rows[context_id][1].content)
            return out

    def token_bits(self, memory_ids: Sequence[str]) -> dict[str, tuple[bytes, bytes | None]]:
        with self._lock:
            out: dict[str, tuple[bytes, bytes | None]] = {}
            for mid in memory_ids:
                if mid in self._token_bits and mid in self._rows:
                    context_id = self._context.get(mid, ("", ""))[0]
                    out[mid] = (self._token_bits[mid], self._token_bits.get(context_id))
            return out

    def browse(self, query: ListQuery) -> Page:
        with self._lock:
            rows = [
                (seq, m) for seq, m, _ in self._rows.values()
                if ((m.superseded_by is not None) if query.superseded
                    else passes(m, query.filters))
                and (query.session_id is None or m.session_id == query.session_id)
                and (query.kind is None or m.kind == query.kind)
                and (query.since is None or m.created_at >= format_timestamp_ceil(query.since))
                and (query.until is None or m.created_at <= format_timestamp(query.until))
                and (query.recalled is None or (m.recall_count > 0) == query.recalled)
            ]
            scores: dict[str, float] = {}
            if query.search:
                search = [[fold(t) for t in g] for g in query.search]
                rows = [(s, m) for s, m in rows if matches_all(self._tokens(m), search)]
                scores = self._bm25(search, [m for _, m in rows], prefixes=True)
            if query.sort in ("recent", "oldest"):
                rows.sort(key=lambda r: (r[1].created_at, r[0]), reverse=query.sort == "recent")
            elif query.sort in ("stale", "recalled"):
                rows.sort(
                    key=lambda r: (
                        r[1].recall_count, r[1].last_recalled_at or "", r[1].created_at, r[0]
                    ), reverse=query.sort == "recalled",
                )
            else:
                rows.sort(key=lambda r: (-scores.get(r[1].id, 0.0), desc(r[1].created_at), -r[0]))
            window = rows[query.offset : query.offset + query.limit]
            total = len(rows) if query.count else -1
            return Page([Scored(m, scores.get(m.id, 0.0)) for _, m in window], total)

    def session_exists(self, session_id: str) -> bool:
        with self._lock:
            return session_id in self._sessions

    def session_counts(self, limit: int) -> list[tuple[str, int]]:
        with self._lock:
            counts: dict[str, int] = {}
            for _, m, _ in self._rows.values():
                if m.superseded_by is None and m.session_id is not None:
                    counts[m.session_id] = counts.get(m.session_id, 0) + 1
        return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:limit]

    def mark_recalled(self, memory_ids: Sequence[str], at: str) -> None:
        with self._lock:
            for mid in memory_ids:
                seq, m, v = self._rows[mid]
                self._rows[mid] = (
                    seq, replace(m, recall_count=m.recall_count + 1, last_recalled_at=at), v
                )

    def supersede(self, old_id: str, new: NewMemory, at: str) -> None:
        with self._lock:
            seq, old, v = self._rows[old_id]
            if old.superseded_by is not None:
                raise MemoryAlreadySupersededError(f"Memory {old.ref} was replaced meanwhile.")
            old = replace(old, superseded_by=new.memory.id, superseded_at=at)
            self._rows[old_id] = (seq, old, v)
            self.add([new])

    def delete(self, memory_id: str, predecessor_id: str | None, successor_id: str | None) -> None:
        with self._lock:
            if self._rows.pop(memory_id, None) is None:
                return
            self._context.pop(memory_id, None)
            self._token_bits.pop(memory_id, None)
            for mid, (context_id, _) in list(self._context.items()):
                if context_id == memory_id:  # dependants forget it, vector included
                    del self._context[mid]
                    seq, m, _ = self._rows[mid]
                    self._rows[mid] = (seq, replace(m, embedding_model=None), None)
            for mid, (seq, m, v) in list(self._rows.items()):
                if m.supersedes == memory_id:
                    self._rows[mid] = (seq, replace(m, supersedes=predecessor_id), v)
            if predecessor_id is None:
                return
            seq, pred, v = self._rows[predecessor_id]
            if successor_id is None:
                self._rows[predecessor_id] = (
                    seq, replace(pred, superseded_by=None, superseded_at=None), v
                )
            else:
                self._rows[predecessor_id] = (seq, replace(pred, superseded_by=successor_id), v)
                sseq, succ, sv = self._rows[successor_id]
                self._rows[successor_id] = (sseq, replace(succ, supersedes=predecessor_id), sv)

    def pending_embeddings(self, model_key: str, limit: int) -> list[Memory]:
        with self._lock:
            rows = sorted(self._rows.values(), key=lambda r: r[0])
            return [m for _, m, _ in rows if m.embedding_model != model_key][:limit]

    def count_pending_embeddings(self, model_key: str) -> int:
        with self._lock:
            return sum(1 for _, m, _ in self._rows.values() if m.embedding_model != model_key)

    def set_embeddings(
        self, vectors: Sequence[tuple[str, Vector]], model_key: str,
        tokens: Mapping[str, bytes] | None = None,
    ) -> None:
        with self._lock:
            for mid, vector in vectors:
                if mid in self._rows:
                    if tokens and mid in tokens:
                        self._token_bits[mid] = tokens[mid]
                    seq, m, _ = self._rows[mid]
                    self._rows[mid] = (seq, replace(m, embedding_model=model_key), vector)

    def export_page(
        self, after: int, limit: int, session_id: str | None
    ) -> list[tuple[int, Memory, Vector | None]]:
        with self._lock:
            rows = sorted(self._rows.values(), key=lambda r: r[0])
            return [
                (seq, m, v) for seq, m, v in rows
                if seq > after and (session_id is None or m.session_id == session_id)
            ][:limit]

    def maintain_index(self, model_key: str) -> bool:
        return False  # a list scan needs no upkeep

    def diagnostics(self) -> dict[str, Any]:
        with self._lock:
            return {"driver": "memory", "memories": len(self._rows)}

    def close(self) -> None:
        pass
