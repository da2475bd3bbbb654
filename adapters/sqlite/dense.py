"""Dense (vector) search of the SQLite store: the in-memory mirror when the vectors fit it,
otherwise sqlite-vec in SQL over the nearest IVF cells (dense_sql.py); exact cosine orders
the final rows."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tinycontext.ports.embedder import Vector
from tinycontext.ports.store import Scope, Scored

from . import dense_filtered, dense_sql, mirror_cells, mirror_file
from .connection import ConnectionPool
from .dense_sql import sign_bits
from .filtering import history_id, where_sql
from .ivf import IvfIndex
from .mirror import MAX_MIRROR_BYTES, VectorMirror
from .mirror_view import MirrorUnusable, mirror_bytes
from .rows import COLUMNS, WIDTH, memory_from_row, scope_sql

PREFETCH_MODELS = 4  # model ids whose kept mirror copy a store restores when it opens


def _is_file(path: Path) -> bool:
    """Whether a kept copy is there; False when the folder cannot even be looked into (the
    store's own open then fails with a coded error saying why)."""
    try:
        return path.is_file()
    except OSError:
        return False


class DenseRetrieval:
    """Vector candidate search over one store's connections."""

    def __init__(self, pool: ConnectionPool, ivf: IvfIndex,
                 probe_share: float | None = None) -> None:
        self._pool = pool
        self._ivf = ivf
        self._probe_share = probe_share
        self._sql = dense_sql.SqlDense(pool, ivf)
        self._model_ids: dict[str, int] = {}
        self._mirrors: dict[int, VectorMirror] = {}
        self._unmirrored: set[int] = set()
        self._restoring: threading.Thread | None = None

    def prefetch(self) -> None:
        """Restore kept mirror copies in the background: a fresh process's first search then
        finds its vectors in memory, read while the model and the vocabulary load (a copy of
        1,000,000 vectors is ~450 MB). Only stores that have such a copy start a thread."""
        copies = [m for m in range(1, PREFETCH_MODELS + 1)
                  if (path := self._copy_path(m)) is not None and _is_file(path)]
        if copies:
            self._restoring = threading.Thread(
                target=self._restore, args=(copies,), name="mirror-restore", daemon=True)
            self._restoring.start()

    def _restore(self, model_ids: list[int]) -> None:
        for model_id in model_ids:
            mirror = self._mirrors.setdefault(model_id, VectorMirror(
                model_id, self._copy_path(model_id), self._probe_share))
            # Any failure (a closed store, a copy of another store) leaves the first search
            # to load the mirror as it would without a copy.
            with contextlib.suppress(Exception), self._pool.lease() as conn:
                dims = mirror.restore(conn)
                if dims:
                    self._group(conn, mirror, dims)

    @property
    def pool(self) -> ConnectionPool:
        return self._pool

    def _copy_path(self, model_id: int) -> Path | None:
        """Where the mirror's copy is kept between processes; none for an encrypted store
        (the copy would hold its vectors' codes in the clear)."""
        return None if self._pool.encrypted else mirror_file.path_for(self._pool.path, model_id)

    def nearest(self, vector: Vector, model_key: str, scope: Scope, limit: int) -> list[Scored]:
        model_id = self._model_id(model_key)
        if model_id is None:
            return []
        if scope.filters:
            with self._pool.lease() as conn:
                mirror = self._mirrors.get(model_id)
                size = mirror.size() if mirror is not None else None
                rows = size if size is not None else self._ivf.rows(conn, model_id)
            return dense_filtered.nearest(self, vector, model_key, scope, limit, rows)
        with self._pool.lease() as conn:
            mirror = self._mirror(conn, model_id, len(vector) // 4)
            if mirror is None:
                return self._sql.nearest(conn, model_id, vector, scope, limit)
            seqs = mirror.candidates(vector, sign_bits(vector), scope, limit)
        return self._exact(seqs, vector, model_key, scope, limit)

    def nearest_many(
        self, vectors: Sequence[Vector], model_key: str, scope: Scope, limit: int
    ) -> list[list[Scored]]:
        model_id = self._model_id(model_key)
        if model_id is None or not vectors:
            return [[] for _ in vectors]
        with self._pool.lease() as conn:
            mirror = self._mirror(conn, model_id, len(vectors[0]) // 4)
            if mirror is None:
                return [self._sql.nearest(conn, model_id, v, scope, limit) for v in vectors]
            seqs = mirror.candidates_many(vectors, [sign_bits(v) for v in vectors], scope, limit)
        return self._exact_many(seqs, vectors, model_key, scope, limit)

    def mirror_for(
        self, model_key: str, dims: int, history: bool = False
    ) -> VectorMirror | None:
        """The model's mirror (of replaced versions: `history`) brought up to date, or None
        (no vectors, or search in SQL)."""
        model_id = self._model_id(model_key)
        if model_id is None:
            return None
        if history:
            model_id = history_id(model_id)
        with self._pool.lease() as conn:
            return self._mirror(conn, model_id, dims)

    def _mirror(self, conn: Any, model_id: int, dims: int) -> VectorMirror | None:
        """The model's in-memory mirror brought up to date, or None to search in SQL (too
        many vectors to hold, or rows the mirror cannot hold)."""
        if model_id in self._unmirrored:
            return None
        mirror = self._mirrors.get(model_id)
        # A loaded mirror knows its size; a count in SQL grows with the store.
        held = mirror.size() if mirror is not None else None
        if self.too_large(conn, model_id, dims, held):
            self._mirrors.pop(model_id, None)
            return None
        if mirror is None:
            mirror = self._mirrors.setdefault(model_id, VectorMirror(
                model_id, self._copy_path(model_id), self._probe_share))
        try:
            mirror.sync(conn)
        except MirrorUnusable:
            self._unmirrored.add(model_id)
            self._mirrors.pop(model_id, None)
            return None
        held = mirror.size() or 0
        if self.too_large(conn, model_id, dims, held):  # grown past the limit by this sync
            self._mirrors.pop(model_id, None)
            return None
        self._group(conn, mirror, dims)
        return mirror

    def _group(self, conn: Any, mirror: VectorMirror, dims: int) -> None:
        """A large mirror scans only the nearest IVF cells (mirror_cells.py); the clustering
        comes from the store's upkeep, which runs for such stores (needs_cells)."""
        large = mirror_cells.serves(mirror.size() or 0, dims)
        mirror.group(conn, self._ivf.current(conn, mirror.model_id) if large else None)

    def too_large(self, conn: Any, model_id: int, dims: int, rows: int | None = None) -> bool:
        """Whether a model's vectors are too many to mirror (its search then runs in SQL)."""
        if rows is None:
            rows = self._ivf.rows(conn, model_id)
        return mirror_bytes(rows, dims) > MAX_MIRROR_BYTES

    def needs_cells(self, conn: Any, model_id: int, dims: int) -> bool:
        """Whether a model's vectors are many enough for IVF cells (k-means and tags kept by
        the store's upkeep): past what the mirror scans whole, or searched in SQL."""
        rows = self._ivf.rows(conn, model_id)
        return mirror_cells.serves(rows, dims) or self.too_large(conn, model_id, dims, rows)

    def forget(self) -> None:
        if self._restoring is not None:  # a restore must not outlive a closed store
            self._restoring.join()
        for mirror in list(self._mirrors.values()):  # the next process starts from a copy
            if (mirror.size() or 0) >= mirror_file.MIN_ROWS:
                mirror.persist()
        self._mirrors.clear()

    def _exact(
        self, seqs: list[int], vector: Vector, model_key: str, scope: Scope, limit: int
    ) -> list[Scored]:
        """sqlite-vec's exact cosine orders the mirror's candidates; the filters drop any
        the mirror has not yet seen change (superseded, re-embedded, moved)."""
        if not seqs:
            return []
        where, params = scope_sql(scope, "m")
        # Live, or under a filter (its candidates): the filter's conditions hold for each.
        life, life_params = where_sql(scope.filters, "m", each=True)
        rows = self._pool.read(
            f"SELECT {COLUMNS}, 1.0 - vec_distance_cosine(m.embedding, ?) AS similarity "
            # CROSS JOIN pins the candidate list as the outer loop (one seek per candidate);
            # a variant without ORDER BY was planned as a scan of memories.
            "FROM json_each(?) j CROSS JOIN memories m ON m.seq = j.value "
            f"WHERE m.embedding_model = ?{life}{where} "
            "ORDER BY similarity DESC, m.created_at DESC, m.id LIMIT ?",
            [vector, json.dumps(seqs), model_key, *life_params, *params, limit],
        )
        return [Scored(memory_from_row(r), float(r[WIDTH])) for r in rows]

    exact_order = _exact  # the filtered search's last step (dense_filtered._few)

    def _exact_many(
        self, seqs: Sequence[list[int]], vectors: Sequence[Vector], model_key: str,
        scope: Scope, limit: int,
    ) -> list[list[Scored]]:
        """`_exact` for several queries in one statement (a save's 32 near-duplicate
        lookups cost 32 statements before), ranked exactly as `_exact` orders them."""
        pairs = [[i, seq] for i, chosen in enumerate(seqs) for seq in chosen]
        if len(vectors) == 1 or not pairs:
            return [self._exact(s, v, model_key, scope, limit)
                    for s, v in zip(seqs, vectors, strict=True)]
        where, params = scope_sql(scope, "m")
        queries = ", ".join("(?, ?)" for _ in vectors)
        rows = self._pool.read(
            f"WITH q(i, v) AS (VALUES {queries}), c(i, seq) AS (SELECT "
            "json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?)) "
            f"SELECT {COLUMNS}, 1.0 - vec_distance_cosine(m.embedding, q.v), c.i "
            "FROM c CROSS JOIN memories m ON m.seq = c.seq JOIN q ON q.i = c.i "
            f"WHERE m.superseded_by IS NULL AND m.embedding_model = ?{where}",
            [*(x for i, v in enumerate(vectors) for x in (i, v)), json.dumps(pairs),
             model_key, *params],
        )
        # ORDER BY similarity DESC, created_at DESC, id: stable sorts, last key first.
        rows.sort(key=lambda r: r[0])
        rows.sort(key=lambda r: r[4], reverse=True)
        rows.sort(key=lambda r: r[WIDTH], reverse=True)
        out: list[list[Scored]] = [[] for _ in vectors]
        for r in rows:
            if len(out[r[WIDTH + 1]]) < limit:
                out[r[WIDTH + 1]].append(Scored(memory_from_row(r), float(r[WIDTH])))
        return out

    def _model_id(self, model_key: str) -> int | None:
        """Id of a model key; cached once known (ids are never reused or renumbered)."""
        known = self._model_ids.get(model_key)
        if known is None:
            row = self._pool.read("SELECT id FROM embedding_models WHERE key = ?", (model_key,))
            if not row:
                return None
            known = self._model_ids[model_key] = int(row[0][0])
        return known
