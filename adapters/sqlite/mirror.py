"""An in-memory copy of one model's sign bits and int8 codes, for fast dense candidates.

Picking a recall's dense candidates in SQL (Hamming distance over the probed IVF cells, then
exact cosine on a few hundred rows read from `memories`) spends most of its time reading rows.
This mirror holds, per vector, its 48 sign-bit bytes and 384 int8 codes (sqlite-vec's
`vec_quantize_int8(..., 'unit')`, stored in `vector_index.codes`): numpy ranks every vector in
scope by Hamming distance, re-ranks the best few thousand by their int8 dot product, and only
the final pool is read from SQLite, where sqlite-vec computes the exact cosine that orders it.
Scanning every vector in scope also finds the exact top 10 where probing a few cells missed
some (the speed benchmark's dense recall@10 against exact, docs/benchmarks.md). Past ~430,000
vectors a query scans only the slots of its nearest IVF cells instead (mirror_cells.py).

The mirror follows the file, including writes by other processes: triggers append the seq of
every changed `vector_index` row to `vector_log` (schema v5), and each search first applies the
log entries after the last one it saw (one indexed read when nothing changed). If the log was
pruned past that point, or too much has died, the mirror reloads from `vector_index`.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from tinycontext import native
from tinycontext.ports.store import Scope

from . import mirror_cells, mirror_file, mirror_load, mirror_masks, mirror_times
from .hamming import hamming, rescore, smallest, word_bytes
from .mirror_view import DEAD, MirrorUnusable, View, code, empty, grow, scope_mask

# Above this many bytes of codes and bits the store searches in SQL (IVF) instead: about
# 1,750,000 vectors of 384 dimensions (~450 MB at 1,000,000), bounded all the same. Past
# mirror_cells.CELLS_FROM_BYTES (~430,000) a query scans only its nearest IVF cells.
MAX_MIRROR_BYTES = 768 * 1024 * 1024
# Hamming candidates re-ranked by int8 codes: this many per pool slot at 20,000 vectors in
# scope, growing with the square root of the scope (sign bits separate near neighbours less
# well among more vectors), at most MAX_FACTOR. Measured recall@10 against exact at 100,000:
# 4x 0.96, 8x 0.975, 16x 1.00.
BASE_FACTOR = 5
MAX_FACTOR = 16
SCALE_ROWS = 20_000
MIN_CANDIDATES = 64


def candidate_count(limit: int, rows: int) -> int:
    factor = min(MAX_FACTOR, BASE_FACTOR * max(1.0, math.sqrt(rows / SCALE_ROWS)))
    return max(MIN_CANDIDATES, int(factor * limit))


class VectorMirror:
    def __init__(self, model_id: int, file: Path | None = None,
                 probe_share: float | None = None) -> None:
        self.model_id = model_id
        self._probe_share = probe_share  # of the scope a large mirror's probe covers
        self._lock = threading.Lock()
        self._head = -1  # last vector_log id applied; -1 = not loaded
        self._view: View | None = None
        # seq -> slot of every live vector; None after a restore from the copy until a
        # change needs it (building it for a large store would slow a fresh process's first
        # search, which needs only the view).
        self._pos: dict[int, int] | None = {}
        self._live = 0  # live slots
        self._file = file  # where a copy is kept between processes (mirror_file.py)
        self._saved = -1  # the log head that copy holds
        self._saving = threading.Lock()  # one writer of the copy at a time
        self._cells = mirror_cells.CellKeeper()  # slots grouped by IVF cell (large mirrors)
        self._index = mirror_masks.SlotIndex()  # seqs -> slots, tag masks (filters)
        self._times = mirror_times.SlotTimes()  # slots' times (windows, "as of")

    def size(self) -> int | None:
        """Vectors held, or None before the first load."""
        return self._live if self._head >= 0 else None

    def _positions(self) -> dict[int, int]:
        view = self._view
        if self._pos is None:
            self._pos = {}
            if view is not None:
                live = native.numpy().flatnonzero(view.kinds[: view.n] != DEAD)
                self._pos = dict(zip(view.seqs[live].tolist(), live.tolist(), strict=True))
        return self._pos

    def _top(self) -> int:
        """The largest live seq."""
        if self._pos is not None or self._view is None:
            return max(self._positions(), default=0)
        view = self._view
        live = view.seqs[: view.n][view.kinds[: view.n] != DEAD]
        return int(live.max()) if len(live) else 0

    def restore(self, conn: Any) -> int:
        """Start from the kept copy if not loaded yet (nothing happens without one); the
        dimensions of the vectors held (0: none)."""
        with self._lock:
            if self._head < 0:
                self._restore(conn)
            return 0 if self._view is None else int(self._view.codes.shape[1])

    def group(self, conn: Any, clustering: Any) -> None:
        """Keep the slots grouped by the cells of the store's clustering (None: no cells)."""
        with self._lock:
            if self._view is not None:
                self._cells.keep(conn, self._view, self.model_id, clustering)

    # -- keeping in step with the file ---------------------------------------------------
    def sync(self, conn: Any) -> None:
        with self._lock:
            if self._head < 0 and self._restore(conn):
                return
            if self._head >= 0 and self._catch_up(conn):
                return
            self._load(conn)  # first use, a pruned log, or mostly dead slots
        if (self.size() or 0) >= mirror_file.MIN_ROWS:  # keep a copy for the next process
            threading.Thread(target=self.persist, name="mirror-copy", daemon=True).start()

    def _catch_up(self, conn: Any) -> bool:
        """Apply the log entries after the last one applied; False when a reload is due."""
        changes = conn.execute(
            "SELECT l.id, l.seq, v.model_id, v.kind, v.session_id, v.bits, v.codes, "
            "v.cell_key "
            "FROM vector_log l LEFT JOIN vector_index v ON v.seq = l.seq "
            "WHERE l.id > ? ORDER BY l.id",
            (self._head,),
        ).fetchall()
        if not changes:
            return True
        if changes[0][0] != self._head + 1:
            return False
        for change in changes:
            self._apply(change[1], change[2:])
        self._head = changes[-1][0]
        view, live = self._view, self._live
        return view is None or view.n - live <= max(1024, live)  # else: many dead slots

    def _restore(self, conn: Any) -> bool:
        """Start from the kept copy and the log since; False (nothing kept) on any doubt."""
        np = native.numpy()

        made: list[View] = []

        def arrays_for(meta: dict[str, Any]) -> list[Any] | None:
            n, words, dims = int(meta["n"]), int(meta["words"]), int(meta["dims"])
            if min(n, words, dims) <= 0 or n * (8 * words + dims) > size:
                return None  # a damaged header: no allocation of what the file cannot hold
            view = replace(empty(words, dims, n + n // 4 + 64), n=n,
                           kind_codes=dict(meta["kinds"]), session_codes=dict(meta["sessions"]))
            made.append(view)
            return [view.seqs[:n], view.kinds[:n], view.sessions[:n], view.bits[:, :n],
                    view.codes[:n], view.cells[:n]]

        try:
            size = 0 if self._file is None else self._file.stat().st_size
        except OSError:
            return False
        meta = None if self._file is None else mirror_file.load(
            self._file, self.model_id, arrays_for)
        if meta is None:
            return False
        view = made[0]
        self._cells.clear()
        live = np.count_nonzero(view.kinds[: view.n] != DEAD)
        self._view, self._head, self._saved = view, int(meta["head"]), int(meta["head"])
        self._pos, self._live = None, int(live)
        try:
            if self._catch_up(conn):
                count, top = conn.execute(
                    "SELECT count(*), coalesce(max(seq), 0) FROM vector_index WHERE model_id = ?",
                    (self.model_id,)).fetchone()
                if count == self._live and top == self._top():
                    return True
        except MirrorUnusable:
            pass
        self._view, self._head, self._pos, self._live = None, -1, {}, 0  # load from SQL
        return False

    def persist(self) -> None:
        """Write the kept copy if it is behind (a search may go on meanwhile: slots it patches
        are applied again from the log on restore, new ones lie past the copy's end)."""
        with self._saving:
            with self._lock:
                view, head = self._view, self._head
                if view is None or self._file is None or head == self._saved:
                    return
                kinds, sessions = dict(view.kind_codes), dict(view.session_codes)
            n = view.n
            meta = {"model_id": self.model_id, "head": head, "kinds": kinds,
                    "sessions": sessions, "n": n, "words": len(view.bits),
                    "dims": view.codes.shape[1]}
            if mirror_file.save(self._file, meta, [view.seqs[:n], view.kinds[:n],
                                                   view.sessions[:n], view.bits[:, :n],
                                                   view.codes[:n], view.cells[:n]]):
                self._saved = head

    def _load(self, conn: Any) -> None:
        view, pos, head = mirror_load.load_rows(conn, self.model_id, _allocate)
        self._pos, self._live = pos, len(pos)
        self._cells.clear()
        self._view = view  # published whole
        self._head = self._log_head(conn) if head is None else int(head)

    @staticmethod
    def _log_head(conn: Any) -> int:
        return int(conn.execute("SELECT coalesce(max(id), 0) FROM vector_log").fetchone()[0])

    def _apply(self, seq: int, row: tuple[Any, ...]) -> None:
        """Bring one seq's slot to the row's state (model_id, kind, session_id, bits, codes,
        cell_key); a missing row (model_id None) or another model's row removes it."""
        np = native.numpy()

        model_id, kind, session_id, bits, codes, cell = row
        positions = self._positions()
        slot = positions.get(seq)
        if model_id != self.model_id:
            if slot is not None and self._view is not None:
                self._view.kinds[slot] = DEAD
                del positions[seq]
                self._live -= 1
            return
        view = self._view if self._view is not None else _allocate(bits, codes, 64)
        if codes is None or len(codes) != view.codes.shape[1]:
            raise MirrorUnusable
        if slot is None:
            if view.n == len(view.seqs):
                view = grow(view)
            slot = view.n
            view = replace(view, n=view.n + 1)
            positions[seq] = slot
            self._live += 1
        view.seqs[slot] = seq
        view.sessions[slot] = code(view.session_codes, session_id)
        view.bits[:, slot] = np.frombuffer(word_bytes(bits), dtype=np.uint64)
        view.codes[slot] = np.frombuffer(codes, dtype=np.int8)
        self._cells.note_tag(slot, int(view.cells[slot]), int(cell))
        view.cells[slot] = cell
        view.kinds[slot] = code(view.kind_codes, kind)  # last: the slot is live from here
        self._view = view

    # -- search --------------------------------------------------------------------------
    def candidates(self, query: bytes, bits: bytes, scope: Scope, limit: int,
                   labels: Sequence[tuple[str, Callable[[], Sequence[int]]]] = (),
                   when: mirror_times.TimeFilter | None = None) -> list[int]:
        """Seqs of the `limit` vectors in scope nearest to `query` by their int8 codes, among
        the best by Hamming distance of the sign `bits`; with `labels` ((label, its rows)),
        only among the slots holding every one of them, and with `when` only among those
        its times let through."""
        return self.candidates_many([query], [bits], scope, limit, labels, when)[0]

    def candidates_many(
        self, queries: Sequence[bytes], bits: Sequence[bytes], scope: Scope, limit: int,
        labels: Sequence[tuple[str, Callable[[], Sequence[int]]]] = (),
        when: mirror_times.TimeFilter | None = None,
    ) -> list[list[int]]:
        """`candidates` for several queries of one scope: the scope's mask is made once and
        the Hamming distances of all queries come from one pass over the sign bits (a save
        looks up every item's near duplicates at once)."""
        np = native.numpy()

        view = self._view
        mask = None if view is None or view.n == 0 else scope_mask(view, scope)
        if view is None or mask is None:
            return [[] for _ in queries]
        if labels or when is not None:
            with self._lock:  # a sync may be publishing a new view meanwhile
                for label, rows in labels:
                    mask &= self._index.mask(view, self._head, label, rows)[: view.n]
                if when is not None:
                    mask &= self._times.mask(view, when)
        n = view.n
        in_scope = int(np.count_nonzero(mask))
        wanted = candidate_count(limit, in_scope)
        if in_scope <= wanted:
            slots = np.flatnonzero(mask)
            return [rescore(view, slots, q, limit) for q in queries]
        small = in_scope * 4 < n  # a small scope: Hamming over its own columns only
        index = self._cells.index
        if (not small and index is not None and index.generation == view.generation
                and mirror_cells.serves(n, view.codes.shape[1])):
            return mirror_cells.candidates(view, index, np.array(self._cells.moved, np.int64),
                                           mask, in_scope, queries, bits, wanted, limit,
                                           self._probe_share)
        columns = np.flatnonzero(mask) if small else None
        distances = hamming(view.bits[:, columns] if small else view.bits[:, :n], bits)
        out = []
        for row, query in enumerate(queries):
            if small:
                assert columns is not None
                slots = columns[smallest(distances[row], wanted, view.seqs[columns])]
            else:
                distances[row][~mask] = 64 * len(view.bits) + 1  # farther than any real one
                slots = smallest(distances[row], wanted, view.seqs[:n])
            out.append(rescore(view, slots, query, limit))
        return out


def _allocate(bits: bytes, codes: bytes | None, capacity: int) -> View:
    if codes is None or len(bits) >= 8192:  # Hamming distances must fit in uint16
        raise MirrorUnusable
    return empty(len(word_bytes(bits)) // 8, len(codes), max(64, capacity + capacity // 4))
