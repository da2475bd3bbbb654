"""IVF cells over a large vector mirror: a query scans the slots of its nearest cells only.

A Hamming pass over every vector of a 1,000,000-vector mirror took 0.12 s for one query and
7.6 s for a save's 32 near-duplicate lookups (loaded 2-core machine). Past CELLS_FROM_BYTES
of mirrored arrays the mirror therefore groups its slots by the store's IVF cells (ivf.py:
spherical k-means centroids and each row's tag in `vector_index.cell_key`), and a query
ranks the centroids, takes the slots of the nearest cells (PROBE_SHARE of the vectors in
scope for a recall pool, fewer for a few nearest neighbours), plus a tail of slots the
grouping does not place (added or re-embedded since, or tagged by another clustering); the
mirror's Hamming -> int8 -> exact cosine pipeline then runs on those. Smaller mirrors scan
every vector in scope as before (same ranked ids).

The grouping is rebuilt (an argsort of the slots' tags) when the tail outgrows TAIL_SHARE of
the mirror or the store has a newer clustering. Re-tagging in SQL is not in `vector_log`
(it changes nothing a search scores), so after a re-clustering the mirror re-reads the tags
from SQL, at most once per REFRESH_SECONDS while rows are still tagged by an older one.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tinycontext import native

from .hamming import hamming_each, rescore, smallest
from .ivf import CELL_BITS
from .mirror_view import View, mirror_bytes

# Mirrored bytes (codes, sign bits, seq) past which the cells serve: the mirror's old limit
# (~430,000 vectors of 384 dimensions), so stores below it rank exactly as before.
CELLS_FROM_BYTES = 192 * 1024 * 1024
# Share of the vectors in scope a recall pool's probe covers (tuned at 1,000,000 vectors
# for dense recall@10 >= 0.95 of exact; docs/benchmarks.md); at least MIN_PROBE_ROWS.
PROBE_SHARE = 0.03
MIN_PROBE_ROWS = 20_000
ROWS_PER_RESULT = 400  # a few nearest neighbours (near-duplicate lookups) need fewer rows:
# at least 1/FEW_DIVISOR of a full probe. For a save's 5-neighbour lookups at 1,000,000
# vectors, 1/10 of a probe was faster than 1/5 and found the same neighbours (their recall
# against exact is set by the 64 Hamming candidates kept, not by the cells).
FEW_DIVISOR = 10
TAIL_SHARE = 1 / 16  # unplaced slots past this share of the mirror: regroup
MIN_TAIL = 4096
REFRESH_SECONDS = 60.0


def serves(rows: int, dims: int) -> bool:
    """Whether a mirror of `rows` vectors of `dims` dimensions searches by cells."""
    return mirror_bytes(rows, dims) > CELLS_FROM_BYTES


def probe_rows(limit: int, in_scope: int, share: float | None = None) -> int:
    """Vectors in scope a query's cells should hold, for `limit` results; `share`: of the
    scope a recall pool's probe covers (None: PROBE_SHARE)."""
    full = max(MIN_PROBE_ROWS, int((PROBE_SHARE if share is None else share) * in_scope))
    return min(full, max(full // FEW_DIVISOR, ROWS_PER_RESULT * limit))


@dataclass(frozen=True)
class CellIndex:
    """Slots of one view layout grouped by the cells of one clustering."""

    generation: int  # the View.generation the slots belong to
    version: int  # the clustering's version
    centroids: Any  # float32 (cells, dims), unit rows
    order: Any  # int64 slots sorted by cell
    starts: Any  # int64 (cells + 1,): order[starts[c]:starts[c + 1]] are cell c's slots
    covered: int  # slots at or past this one were added after the grouping: tail
    tail: Any  # int64 slots before `covered` not grouped (another clustering's tag)

    def pending(self, n: int, moved: int) -> int:
        return n - self.covered + len(self.tail) + moved

    def slots(self, query: Any, n: int, rows: int, share: float, moved: Any) -> Any:
        """Slots of the cells nearest to `query` holding about `rows` in-scope vectors (the
        scope being `share` of the mirror), then the tail; each once."""
        np = native.numpy()

        cells = len(self.centroids)
        per_cell = max(len(self.order) * share / cells, 1e-9)
        wanted = min(cells, max(1, math.ceil(rows / per_cell)))
        # einsum, not `@`: BLAS threads would spin against the model's.
        scores = np.einsum("ij,j->i", self.centroids, query)
        nearest = np.argpartition(-scores, wanted - 1)[:wanted] if wanted < cells else None
        if nearest is None:
            parts = [self.order]
        else:
            parts = [self.order[self.starts[c] : self.starts[c + 1]] for c in nearest.tolist()]
        parts += [self.tail, np.arange(self.covered, n, dtype=np.int64), moved]
        picked = np.concatenate(parts)
        # A moved slot may sit in its old cell too. Order does not matter otherwise: the
        # ranking that follows breaks ties by seq.
        return np.unique(picked) if len(moved) else picked


def candidates(view: View, index: CellIndex, moved: Any, mask: Any, in_scope: int,
               queries: Sequence[bytes], bits: Sequence[bytes], wanted: int, limit: int,
               probe_share: float | None = None) -> list[list[int]]:
    """The mirror's `candidates` of each query among the slots of its nearest cells (and
    the tail), `mask` the scope's live slots. The queries' slots are filtered, gathered and
    Hamming-scored together (a save's lookups at 1,000,000 vectors spent most of their time
    in per-query numpy calls)."""
    np = native.numpy()

    rows, share = probe_rows(limit, in_scope, probe_share), in_scope / view.n
    picked = [index.slots(np.frombuffer(q, np.float32), view.n, rows, share, moved)
              for q in queries]
    slots = np.concatenate(picked)
    owner = np.repeat(np.arange(len(queries)), [len(p) for p in picked])
    keep = mask[slots]
    slots, owner = slots[keep], owner[keep]
    distances = hamming_each(view.bits[:, slots], bits, owner)
    bounds = np.searchsorted(owner, np.arange(len(queries) + 1))
    out = []
    for row, query in enumerate(queries):
        mine = slots[bounds[row] : bounds[row + 1]]
        if len(mine) > wanted:
            mine = mine[smallest(distances[bounds[row] : bounds[row + 1]], wanted,
                                 view.seqs[mine])]
        out.append(rescore(view, mine, query, limit))
    return out


def build(view: View, version: int, centroids: Any) -> CellIndex:
    """Group the view's slots by their tags of clustering `version`."""
    np = native.numpy()

    n = view.n
    tags = view.cells[:n]
    mine = (tags >> CELL_BITS) == version
    placed = np.flatnonzero(mine)
    cell = (tags[placed] & ((1 << CELL_BITS) - 1)).astype(np.int64)
    keep = cell < len(centroids)  # a tag past the centroids cannot be placed: tail
    placed, cell = placed[keep], cell[keep]
    by_cell = np.argsort(cell, kind="stable")
    starts = np.zeros(len(centroids) + 1, np.int64)
    np.cumsum(np.bincount(cell, minlength=len(centroids)), out=starts[1:])
    unplaced = np.ones(n, bool)
    unplaced[placed] = False
    tail = np.flatnonzero(unplaced)
    return CellIndex(view.generation, version, centroids, placed[by_cell], starts, n, tail)


def refresh_tags(conn: Any, view: View, model_id: int) -> None:
    """Re-read every slot's tag from SQL (re-tagging is not logged)."""
    np = native.numpy()

    n = view.n
    rows = conn.execute(
        "SELECT seq, cell_key FROM vector_index WHERE model_id = ?", (model_id,)).fetchall()
    if not rows or n == 0:
        return
    pairs = np.array(rows, dtype=np.int64)
    by_seq = np.argsort(view.seqs[:n], kind="stable")
    sorted_seqs = view.seqs[:n][by_seq]
    at = np.clip(np.searchsorted(sorted_seqs, pairs[:, 0]), 0, n - 1)
    found = sorted_seqs[at] == pairs[:, 0]
    view.cells[by_seq[at[found]]] = pairs[found, 1]


class CellKeeper:
    """When to regroup a mirror's slots, and when to re-read their tags from SQL."""

    def __init__(self) -> None:
        self.index: CellIndex | None = None
        self.moved: list[int] = []  # grouped slots whose tag changed since
        self._refreshed = -math.inf

    def clear(self) -> None:
        self.index, self.moved = None, []

    def note_tag(self, slot: int, old: int, new: int) -> None:
        index = self.index
        if index is not None and slot < index.covered and old != new:
            self.moved.append(slot)

    def keep(self, conn: Any, view: View, model_id: int, clustering: Any) -> None:
        """Bring the grouping up to date for `clustering` (None: no cells)."""
        np = native.numpy()

        if clustering is None:
            self.clear()
            return
        index, n = self.index, view.n
        limit = max(MIN_TAIL, int(n * TAIL_SHARE))
        now = time.monotonic()
        if (index is not None and index.generation == view.generation
                and index.version == clustering.version
                and index.pending(n, len(self.moved)) - len(index.tail) <= limit):
            # Up to date, unless the store has re-tagged rows the grouping left in its tail.
            if len(index.tail) <= limit or now - self._refreshed < REFRESH_SECONDS:
                return
            self._refreshed = now
            if _stale_in_sql(conn, model_id, clustering.version) >= len(index.tail) - limit:
                return
            refresh_tags(conn, view, model_id)
        else:
            stale = int(np.count_nonzero((view.cells[:n] >> CELL_BITS) != clustering.version))
            if stale > limit and now - self._refreshed >= REFRESH_SECONDS:
                self._refreshed = now
                if _stale_in_sql(conn, model_id, clustering.version) < stale - limit:
                    refresh_tags(conn, view, model_id)
        self.index = build(view, clustering.version, clustering.centroids)
        self.moved = []


def _stale_in_sql(conn: Any, model_id: int, version: int) -> int:
    """Rows the store has not yet tagged by clustering `version` (an index range count)."""
    return int(conn.execute(
        "SELECT count(*) FROM vector_index WHERE model_id = ? AND cell_key < ?",
        (model_id, version << CELL_BITS)).fetchone()[0])
