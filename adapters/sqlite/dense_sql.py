"""Dense search in SQL, for a model whose vectors are more than the in-memory mirror holds.

sqlite-vec's Hamming distance on sign bits picks a bounded candidate set and its exact cosine
orders those rows. A small scope (or a model not clustered yet) reads every row in scope; a
large one only the rows of the query's nearest IVF cells, plus rows not yet re-tagged.
"""

from __future__ import annotations

import json
import math
import time
from typing import Any

from tinycontext import native
from tinycontext.ports.embedder import Vector
from tinycontext.ports.store import Scope, Scored

from . import ivf as sqlite_ivf
from .connection import ConnectionPool
from .ivf import CELL_BITS, IvfIndex, count_ttl
from .rows import COLUMNS, WIDTH, memory_from_row, padded, scope_sql

# Exact cosine is computed on twice as many sign-bit candidates as asked for (at least
# MIN_RERANK); in scopes smaller than that every vector is scored exactly. Past
# RERANK_SCALE_ROWS vectors the factor grows with the square root of the store (at most
# MAX_RERANK_FACTOR): sign bits separate near neighbours less well among more vectors
# (at 100,000 recall@10 against exact rises with the factor, each extra row costing a little
# time), while at 20,000 2x already finds the exact top 10.
MIN_RERANK = 64
RERANK_FACTOR = 2
RERANK_SCALE_ROWS = 20_000
MAX_RERANK_FACTOR = 6
MAX_SCOPE_COUNTS = 256  # cached scope sizes (scopes include session ids: bounded)


def rerank_count(limit: int, rows: int) -> int:
    """Sign-bit candidates scored exactly for `limit` results among `rows` vectors."""
    factor = min(MAX_RERANK_FACTOR, max(RERANK_FACTOR, RERANK_FACTOR * math.sqrt(
        rows / RERANK_SCALE_ROWS)))
    return max(MIN_RERANK, int(factor * limit))


def sign_bits(vector: Vector) -> bytes:
    """The sign bits of a vector exactly as sqlite-vec's vec_quantize_binary packs them
    (bit set for x > 0, least significant bit first), computed without a query."""
    np = native.numpy()

    values = np.frombuffer(padded(vector), dtype=np.float32)
    return bytes(np.packbits(values > 0, bitorder="little").tobytes())


class SqlDense:
    """Vector search in SQL over one store's connections, with its cached scope sizes."""

    def __init__(self, pool: ConnectionPool, ivf: IvfIndex) -> None:
        self._pool = pool
        self._ivf = ivf
        self._scope_counts: dict[tuple[int, Scope], tuple[float, int]] = {}

    def nearest(
        self, conn: Any, model_id: int, vector: Vector, scope: Scope, limit: int
    ) -> list[Scored]:
        """The nearest `limit` live memories in scope to `vector`, exactly ordered."""
        where, params = scope_sql(scope, "v")
        clustering = self._ivf.current(conn, model_id)
        large = 2 * sqlite_ivf.PROBE_ROWS
        if clustering is None or self._scope_rows(conn, model_id, scope) <= large:
            # Small scope (or not clustered yet): every row in scope.
            return self._ranked(
                "vector_index", [], " AND v.model_id = ?" + where,
                [model_id, *params], vector, limit, rerank_count(limit, 0),
            )
        rows = self._ivf.rows(conn, model_id)
        probes = clustering.probes(vector, rows, limit)
        # Large scope: only rows of the nearest cells, plus rows not yet re-tagged.
        return self._cells(
            model_id, probes, clustering.version << CELL_BITS, where, params, vector, limit,
            rerank_count(limit, rows),
        )

    def _cells(
        self, model_id: int, cells: list[int], untagged: int, where: str,
        params: list[Any], vector: Vector, limit: int, rerank: int,
    ) -> list[Scored]:
        """The best `limit` rows of the given cells (and of rows tagged before `untagged`)."""
        source = (
            "(SELECT seq, kind, session_id, bits FROM vector_index WHERE model_id = ? "
            "AND cell_key IN (SELECT value FROM json_each(?)) UNION ALL "
            "SELECT seq, kind, session_id, bits FROM vector_index WHERE model_id = ? "
            "AND cell_key < ?)"
        )
        source_params = [model_id, json.dumps(cells), model_id, untagged]
        return self._ranked(source, source_params, where, params, vector, limit, rerank)

    def _ranked(
        self, source: str, source_params: list[Any], filters: str, params: list[Any],
        vector: Vector, limit: int, rerank: int,
    ) -> list[Scored]:
        # Stage 1: Hamming distance on sign bits picks a bounded candidate set in C.
        # Stage 2: exact cosine (sqlite-vec) on those rows' float32 vectors.
        rows = self._pool.read(
            f"WITH candidates AS (SELECT v.seq FROM {source} v WHERE 1 = 1{filters} "
            "ORDER BY vec_distance_hamming(vec_bit(v.bits), vec_bit(?)) LIMIT ?) "
            f"SELECT {COLUMNS}, 1.0 - vec_distance_cosine(m.embedding, ?) AS similarity "
            "FROM candidates c JOIN memories m ON m.seq = c.seq "
            "ORDER BY similarity DESC, m.created_at DESC, m.id LIMIT ?",
            [*source_params, *params, sign_bits(vector), rerank, vector, limit],
        )
        return [Scored(memory_from_row(r), float(r[WIDTH])) for r in rows]

    def _scope_rows(self, conn: Any, model_id: int, scope: Scope) -> int:
        if scope.session_id is None and not scope.exact and scope.kind == "episodic":
            return self._ivf.rows(conn, model_id)  # the whole store's episodic vectors
        key = (model_id, scope)
        now = time.monotonic()
        cached = self._scope_counts.get(key)
        if cached is not None and now - cached[0] < count_ttl(cached[1]):
            return cached[1]
        where, params = scope_sql(scope, "v")
        count = int(conn.execute(
            f"SELECT count(*) FROM vector_index v WHERE v.model_id = ?{where}",
            [model_id, *params],
        ).fetchone()[0])
        self._scope_counts.pop(key, None)
        while len(self._scope_counts) >= MAX_SCOPE_COUNTS:  # the oldest entry goes first
            del self._scope_counts[next(iter(self._scope_counts))]
        self._scope_counts[key] = (now, count)
        return count
