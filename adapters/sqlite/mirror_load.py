"""Loading a vector mirror from `vector_index` (the slow path: a kept copy spares it)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from tinycontext import native

from .hamming import word_bytes
from .mirror_view import MirrorUnusable, View, code, grow

LOAD_CHUNK = 8192


def load_rows(conn: Any, model_id: int, allocate: Callable[[bytes, bytes | None, int], View]
         ) -> tuple[View | None, dict[int, int], int | None]:
    """(view, seq -> slot, log head) of every vector of `model_id`; `allocate` sizes the
    view from the first row (and refuses rows a mirror cannot hold)."""
    np = native.numpy()

    view: View | None = None
    pos: dict[int, int] = {}
    # One statement, so the log head and the rows come from the same snapshot. NOT
    # INDEXED: a table scan is cheaper than a lookup per row from the bits index.
    cursor = conn.execute(
        "SELECT (SELECT coalesce(max(id), 0) FROM vector_log), seq, kind, session_id, "
        "bits, codes, cell_key FROM vector_index NOT INDEXED WHERE model_id = ?",
        (model_id,),
    )
    head = None
    while rows := cursor.fetchmany(LOAD_CHUNK):  # a chunk at a time: bounded peak memory
        head = rows[0][0]
        if view is None:  # sized by a count (a hint: it may be a moment old)
            view = allocate(rows[0][4], rows[0][5], int(conn.execute(
                "SELECT count(*) FROM vector_index WHERE model_id = ?", (model_id,)
            ).fetchone()[0]))
        dims = view.codes.shape[1]
        # Column-wise (one transpose in C): row by row, a large store's load spends most of
        # its time in Python.
        _, seqs, kinds, sessions, bits, codes, cells = zip(*rows, strict=True)
        if None in codes or set(map(len, codes)) != {dims}:
            raise MirrorUnusable
        while view.n + len(rows) > len(view.seqs):
            view = grow(view)
        lo, hi = view.n, view.n + len(rows)
        view.seqs[lo:hi] = seqs
        view.sessions[lo:hi] = [code(view.session_codes, s) for s in sessions]
        whole = len(set(map(len, bits))) == 1 and len(bits[0]) % 8 == 0
        view.bits[:, lo:hi] = np.frombuffer(
            b"".join(bits if whole else map(word_bytes, bits)), np.uint64
        ).reshape(len(rows), -1).T
        view.codes[lo:hi] = np.frombuffer(b"".join(codes), np.int8).reshape(len(rows), -1)
        view.cells[lo:hi] = cells
        view.kinds[lo:hi] = [code(view.kind_codes, k) for k in kinds]
        pos.update(zip(seqs, range(lo, hi), strict=True))
        view = replace(view, n=hi)
    return view, pos, head
