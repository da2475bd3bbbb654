"""Inverted-file (IVF) partitioning of the vector index, so dense search cost stays bounded.

Once a model has TRAIN_AT vectors, a background step clusters a sample of them (spherical
k-means) into cells and tags every row of `vector_index` with its nearest centroid. A query
then scans only the rows of the cells nearest to it (PROBE_ROWS rows at 20k memories,
growing with the square root of the store), plus any row not yet tagged by the current
clustering, and sqlite-vec ranks those (sign-bit prefilter, then exact cosine). The store
is re-clustered when it has grown GROWTH times; rows keep their old tags until re-tagged,
and stay searchable meanwhile because stale rows are always scanned.

A row's tag is `version << CELL_BITS | cell`; 0 means "never tagged".
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass
from typing import Any

from tinycontext import native

TRAIN_AT = 4096
GROWTH = 4
PROBE_ROWS = 3000
PROBE_SCALE_ROWS = 20000
ROWS_PER_RESULT = 15
SAMPLE_ROWS = 20000
KMEANS_ROUNDS = 10
RETAG_BATCH = 2000
CELL_BITS = 20
MIN_CELLS = 64
COUNT_TTL_SECONDS = 2.0
# A count of a large store costs a scan of an index (recounted every COUNT_TTL_SECONDS, it
# set the dense search's tail latency) and only sizes the probe (by its square root): it is
# kept longer the larger it is, COUNT_TTL_SECONDS per COUNT_TTL_SCALE_ROWS rows, so between
# two counts the writes a store takes change it by about a percent.
COUNT_TTL_SCALE_ROWS = 40_000


def count_ttl(count: int) -> float:
    """Seconds a vector count of this size is reused."""
    return COUNT_TTL_SECONDS * max(1.0, count / COUNT_TTL_SCALE_ROWS)


def train_at() -> int:
    return TRAIN_AT


def probe_rows() -> int:
    return PROBE_ROWS  # read at call time so tests can shrink it


def cell_count(rows: int) -> int:
    """About 4 x sqrt(rows) cells, a power of two between MIN_CELLS and 4096."""
    target = max(MIN_CELLS, min(4096, int(4 * math.sqrt(max(rows, 1)))))
    return 1 << round(math.log2(target))


@dataclass(frozen=True)
class Clustering:
    version: int
    centroids: Any  # numpy float32 array (cells x dims), rows unit length

    def tag(self, vector: bytes) -> int:
        np = native.numpy()

        v = np.frombuffer(vector, dtype=np.float32)
        # einsum, not `@`: BLAS would start threads that spin against the model's on saves.
        return (self.version << CELL_BITS) | int(np.argmax(np.einsum("ij,j->i", self.centroids, v)))

    def tag_many(self, vectors: list[bytes]) -> list[int]:
        """`tag` of each vector, by one matrix product: re-tagging 1,000,000 rows a row at a
        time took 2,013 s (loaded 2-core machine); 2,000 rows cost 0.09 s this way, 1 s by
        einsum. BLAS may start threads, but this runs only in the background upkeep."""
        np = native.numpy()

        matrix = np.frombuffer(b"".join(vectors), dtype=np.float32).reshape(len(vectors), -1)
        cells = np.argmax(matrix @ self.centroids.T, axis=1)
        return [(self.version << CELL_BITS) | int(c) for c in cells]

    def probes(self, vector: bytes, rows: int, limit: int) -> list[int]:
        """Tags of the cells nearest to `vector`, covering about PROBE_ROWS rows for a recall
        pool, fewer for a handful of nearest neighbours (dedup looks for near-copies, which
        sit in the query's own cell or next to it)."""
        np = native.numpy()

        cells = len(self.centroids)
        per_cell = max(rows / cells, 1.0)
        # A fixed share of a growing store would lose recall; a fixed row count would grow
        # slower than the neighbourhood to search. The square root sits between (measured:
        # recall@10 against exact search fell to 0.89 at 100k with a flat 3,000 rows).
        full = max(probe_rows(), int(probe_rows() * math.sqrt(rows / PROBE_SCALE_ROWS)))
        budget = min(full, max(full // 5, ROWS_PER_RESULT * limit))
        wanted = min(cells, max(1, math.ceil(budget / per_cell)))
        scores = np.einsum("ij,j->i", self.centroids, np.frombuffer(vector, dtype=np.float32))
        nearest = np.argpartition(-scores, wanted - 1)[:wanted] if wanted < cells else range(cells)
        return [(self.version << CELL_BITS) | int(c) for c in nearest]


def spherical_kmeans(sample: Any, cells: int, seed: int = 7) -> Any:
    """Unit-length centroids of `sample` (n x d float32) by Lloyd's rounds on cosine."""
    np = native.numpy()

    rng = np.random.default_rng(seed)
    centroids = sample[rng.choice(len(sample), size=cells, replace=False)].copy()
    for _ in range(KMEANS_ROUNDS):
        assign = np.argmax(sample @ centroids.T, axis=1)
        sums = np.zeros_like(centroids)
        np.add.at(sums, assign, sample)
        norms = np.linalg.norm(sums, axis=1)
        empty = norms == 0
        if empty.any():  # re-seed empty cells from random points
            sums[empty] = sample[rng.choice(len(sample), size=int(empty.sum()))]
            norms[empty] = np.linalg.norm(sums[empty], axis=1)
        centroids = (sums / norms[:, None]).astype(np.float32)
    return centroids


class IvfIndex:
    """Per-store cache of the current clustering of each model, and the upkeep steps."""

    def __init__(self) -> None:
        self._clusterings: dict[int, Clustering] = {}
        self._counts: dict[int, tuple[float, int]] = {}
        self._lock = threading.Lock()

    # -- reads ---------------------------------------------------------------------------
    def current(self, conn: Any, model_id: int) -> Clustering | None:
        row = conn.execute(
            "SELECT max(version) FROM vector_versions WHERE model_id = ?", (model_id,)
        ).fetchone()
        version = row[0] if row else None
        if version is None:
            return None
        cached = self._clusterings.get(model_id)
        if cached is not None and cached.version == version:
            return cached
        np = native.numpy()

        blobs = conn.execute(
            "SELECT centroid FROM vector_centroids WHERE model_id = ? AND version = ? "
            "ORDER BY cell",
            (model_id, version),
        ).fetchall()
        if not blobs:
            return None
        centroids = np.stack([np.frombuffer(b[0], dtype=np.float32) for b in blobs])
        clustering = Clustering(int(version), centroids)
        with self._lock:
            self._clusterings[model_id] = clustering
        return clustering

    def rows(self, conn: Any, model_id: int) -> int:
        """Vectors of a model (cached for a moment: it only sizes the probe)."""
        now = time.monotonic()
        cached = self._counts.get(model_id)
        if cached is not None and now - cached[0] < count_ttl(cached[1]):
            return cached[1]
        count = int(conn.execute(
            "SELECT count(*) FROM vector_index WHERE model_id = ?", (model_id,)
        ).fetchone()[0])
        self._counts[model_id] = (now, count)
        return count

    # -- upkeep (background thread) ------------------------------------------------------
    def step(self, pool: Any, model_id: int) -> bool:
        """One bounded unit of upkeep; True while more remains."""
        with pool.lease() as conn:
            # The cached count: this runs after every few seconds of writes, and only a
            # fourfold growth re-clusters (a fresh count scans an index of the whole store).
            rows = self.rows(conn, model_id)
            current = self.current(conn, model_id)
            trained_on = 0
            if current is not None:
                trained_on = conn.execute(
                    "SELECT trained_on FROM vector_versions WHERE model_id = ? AND version = ?",
                    (model_id, current.version),
                ).fetchone()[0]
        if rows >= train_at() and (current is None or rows >= GROWTH * trained_on):
            self._train(pool, model_id, rows, current.version if current else 0)
            return True
        if current is None:
            return False
        return self._retag(pool, model_id, current)

    def _train(self, pool: Any, model_id: int, rows: int, last_version: int) -> None:
        np = native.numpy()

        stride = max(1, rows // SAMPLE_ROWS)
        blobs = pool.read(
            "SELECT m.embedding FROM vector_index v JOIN memories m ON m.seq = v.seq "
            # In seq order: the clustering must not depend on which index the planner picks.
            "WHERE v.model_id = ? AND v.seq % ? = 0 ORDER BY v.seq LIMIT ?",
            (model_id, stride, SAMPLE_ROWS),
        )
        cells = cell_count(rows)
        if len(blobs) < cells:
            return
        sample = np.stack([np.frombuffer(b[0], dtype=np.float32) for b in blobs])
        centroids = spherical_kmeans(sample, cells)
        with pool.write() as conn:
            latest = conn.execute(
                "SELECT coalesce(max(version), 0) FROM vector_versions WHERE model_id = ?",
                (model_id,),
            ).fetchone()[0]
            if latest != last_version:
                return  # another process re-clustered meanwhile
            version = latest + 1
            conn.execute(
                "INSERT INTO vector_versions(model_id, version, trained_on) VALUES (?, ?, ?)",
                (model_id, version, rows),
            )
            conn.executemany(
                "INSERT INTO vector_centroids(model_id, version, cell, centroid) "
                "VALUES (?, ?, ?, ?)",
                [(model_id, version, i, c.tobytes()) for i, c in enumerate(centroids)],
            )

    def _retag(self, pool: Any, model_id: int, current: Clustering) -> bool:
        floor = current.version << CELL_BITS
        stale = pool.read(
            "SELECT v.seq, m.embedding FROM vector_index v JOIN memories m ON m.seq = v.seq "
            "WHERE v.model_id = ? AND v.cell_key < ? LIMIT ?",
            (model_id, floor, RETAG_BATCH),
        )
        if not stale:
            if pool.read("SELECT 1 FROM vector_centroids WHERE model_id = ? AND version < ? "
                         "LIMIT 1", (model_id, current.version)):
                with pool.write() as conn:  # old clusterings are no longer referenced
                    conn.execute(
                        "DELETE FROM vector_centroids WHERE model_id = ? AND version < ?",
                        (model_id, current.version),
                    )
            return False
        tags = list(zip(current.tag_many([blob for _, blob in stale]),
                        [seq for seq, _ in stale], strict=True))
        with pool.write() as conn:
            conn.executemany("UPDATE vector_index SET cell_key = ? WHERE seq = ?", tags)
        return True  # the next step cleans up once nothing is stale
