"""The two retrievers of the SQLite store: FTS5 BM25 and sqlite-vec cosine (dense.py), both
bounded."""

from __future__ import annotations

import math
from collections.abc import Sequence

from tinycontext.domain.context import KEYWORD_CONTEXT_WEIGHT
from tinycontext.domain.text import fold, stem_groups
from tinycontext.ports.store import Scope, Scored

from .connection import ConnectionPool
from .dense import DenseRetrieval
from .filter_share import share
from .filtering import where_sql
from .ivf import IvfIndex
from .pages import varint
from .rows import COLUMNS, WIDTH, memory_from_row, scope_sql
from .word_counts import WordCounts


def recall_bm25(context_weight: float = KEYWORD_CONTEXT_WEIGHT) -> str:
    """Recall's BM25 over the columns (terms, stems, context): stems at 1, context lower."""
    return f"bm25(memory_fts, 0.0, 1.0, {float(context_weight)!r})"


# Keyword side: at most this many postings scored per query (see _prune_common).
MIN_POSTINGS = 3000
POSTINGS_PER_RESULT = 10
RAREST_WORD_CAP = 4
# A filter letting through at least this share of the memories is searched as the whole
# store is (best matches first, then their rows); a narrower one lets its rows drive.
BROAD = 0.2


def fts5_idf(documents: int, rows: int) -> float:
    """FTS5's BM25 IDF (with its floor for words in more than half of the rows)."""
    return max(math.log((rows - documents + 0.5) / (documents + 0.5)), 1e-6)



def _phrase(group: Sequence[str], prefix: bool = False) -> str:
    # Tokens hold only letters and digits (domain.text), so quoting cannot be broken out of.
    text = '"' + " ".join(t.replace('"', "") for t in group) + '"'
    return text + "*" if prefix else text


def fts_any(groups: Sequence[Sequence[str]]) -> str:
    return " OR ".join(_phrase(g) for g in groups if g)


def fts_all_prefixes(groups: Sequence[Sequence[str]]) -> str:
    """Every group required, each one's last word a prefix (list search, as a search box)."""
    return " ".join(_phrase(g, prefix=True) for g in groups if g)



class Retrieval(DenseRetrieval):
    """Keyword and vector candidate search over one store's connections (the vector side
    in dense.py)."""

    def __init__(self, pool: ConnectionPool, ivf: IvfIndex, probe_share: float | None = None,
                 keyword_context_weight: float = KEYWORD_CONTEXT_WEIGHT) -> None:
        super().__init__(pool, ivf, probe_share)
        self._recall_bm25 = recall_bm25(keyword_context_weight)
        # The document frequencies read, kept across the store's own writes (word_counts.py).
        self.words = WordCounts(pool)

    def _prune_common(self, groups: Sequence[Sequence[str]], limit: int) -> list[Sequence[str]]:
        """Keep the rarest query words whose postings fit a budget.

        FTS5 scores every document matching any word, so one very common word would make the
        keyword side cost grow with the store. Common words carry little BM25 weight anyway;
        the dense side covers their meaning.
        """
        df = self._frequencies(groups)
        if not df:
            return []
        budget = max(MIN_POSTINGS, POSTINGS_PER_RESULT * limit)
        ranked = sorted(groups, key=lambda g: (min(df.get(fold(t), 0) for t in g), list(g)))
        kept: list[Sequence[str]] = []
        spent = 0
        for group in ranked:
            cost = min(df.get(fold(t), 0) for t in group)
            if kept and spent + cost > budget:
                break
            if not kept and cost > RAREST_WORD_CAP * budget:
                return []  # every word is in a large share of the store: nothing to rank by
            kept.append(group)
            spent += cost
        return kept

    def _frequencies(self, groups: Sequence[Sequence[str]]) -> dict[str, int]:
        """Memories holding each (folded) word of the groups, in any column; {} for none.

        Recall asks about many of the same words again (the keyword query, its ideal score,
        the feedback passes' candidate words, then the next recall's), and counting a common
        word reads every posting of it: the store keeps the counts (word_counts.py)."""
        tokens = sorted({fold(t) for g in groups for t in g})
        return self.words.lookup(tokens) if tokens else {}

    def keyword_ideal(self, groups: Sequence[Sequence[str]]) -> float:
        stemmed = [g for g in stem_groups([list(g) for g in groups]) if g]
        df = self._frequencies(stemmed)
        if not df:
            return 0.0
        rows = self._indexed_rows()
        return sum(fts5_idf(min(df[fold(t)] for t in g), rows) for g in stemmed)

    def _indexed_rows(self) -> int:
        # FTS5 keeps the row count in its averages record (a varint first): no count(*).
        record = self._pool.read("SELECT block FROM memory_fts_data WHERE id = 1")
        return varint(record[0][0], 0)[0] if record and record[0][0] else 0

    def keyword_rarity(self, words: Sequence[str]) -> dict[str, float]:
        df = self._frequencies([[w] for w in words])
        if not df:
            return {}
        rows = self._indexed_rows()
        return {w: fts5_idf(n, rows) for w, n in df.items() if n > 0}

    def indexed_words(self, memory_ids: Sequence[str]) -> dict[str, list[str]]:
        """The keyword index's `stems` column of each memory: the stemmed words it was
        given at save, no stemming. Read from FTS5's content table (its second column,
        c1) by rowid, as the averages record is read from its data table: through the
        virtual table the same lookup costs several times more."""
        if not memory_ids:
            return {}
        marks = ",".join("?" * len(memory_ids))
        rows = self._pool.read(
            "SELECT m.id, c.c1 FROM memories m JOIN memory_fts_content c ON c.id = m.seq "
            f"WHERE m.id IN ({marks})", list(memory_ids),
        )
        return {mid: (stems or "").split() for mid, stems in rows}

    def keyword_search(
        self, groups: Sequence[Sequence[str]], scope: Scope, limit: int
    ) -> list[Scored]:
        stemmed = stem_groups([list(g) for g in groups])
        any_word = fts_any(self._prune_common(stemmed, limit))
        if not any_word:
            return []
        # Recall reads the stems of the memory's own words and of its save-time context.
        match = f"{{stems context}} : ({any_word})"
        where, params = scope_sql(scope, "m")
        part = 1.0
        if scope.filters and scope.session_id is None and not scope.exact:
            part = share(self._pool, scope.filters, self._indexed_rows())
        if scope.session_id is None and not scope.exact and part >= BROAD:
            # Whole store, or a broad filter: most matches are in scope, so rank inside
            # FTS5 first and look up only the best rows (one memories lookup per row is the
            # main cost), as many more as the filter's share asks.
            wanted = math.ceil((2 * limit + 20) / part)
            each, each_params = where_sql(scope.filters, "m", each=True)
            # CROSS JOIN keeps the best matches the outer loop: with a filter's conditions on
            # memories, and in some SQLite versions (SQLCipher's build) even without one, the
            # planner would rather walk every live memory of the kind and probe the hits.
            rows = self._pool.read(
                f"WITH hits AS (SELECT rowid, {self._recall_bm25} AS s FROM memory_fts "
                "WHERE memory_fts MATCH ? ORDER BY s, rowid DESC LIMIT ?) "
                f"SELECT {COLUMNS}, -h.s FROM hits h CROSS JOIN memories m ON m.seq = h.rowid "
                f"WHERE {(each + where)[len(' AND '):]} "
                "ORDER BY h.s, m.created_at DESC, m.id LIMIT ?",
                [match, wanted, *each_params, *params, limit],
            )
            if len(rows) == limit or not self._more_matches(match, wanted):
                return [Scored(memory_from_row(r), float(r[WIDTH])) for r in rows]
        life, life_params = where_sql(scope.filters, "m")
        # With a filter the keyword index must still drive (CROSS JOIN pins it outside): a
        # walk of a tag's rows asking FTS5 about each would cost a full match per row.
        join = "CROSS JOIN" if scope.filters else "JOIN"
        rows = self._pool.read(
            f"SELECT {COLUMNS}, -{self._recall_bm25} AS score FROM memory_fts "
            f"{join} memories m ON m.seq = memory_fts.rowid "
            f"WHERE memory_fts MATCH ?{life}{where} "
            f"ORDER BY {self._recall_bm25}, m.created_at DESC, m.id LIMIT ?",
            [match, *life_params, *params, limit],
        )
        return [Scored(memory_from_row(r), float(r[WIDTH])) for r in rows]

    def _more_matches(self, match: str, than: int) -> bool:
        found = self._pool.read(
            "SELECT count(*) FROM (SELECT 1 FROM memory_fts WHERE memory_fts MATCH ? LIMIT ?)",
            (match, than + 1),
        )
        return bool(found[0][0] > than)
