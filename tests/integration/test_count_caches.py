"""The caches of scope sizes that steer dense search are bounded: one entry per scope, and
scopes include session ids, of which a long-lived store sees any number."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tinycontext.adapters.postgres import dense as pg_dense
from tinycontext.adapters.sqlite import dense as sqlite_dense
from tinycontext.adapters.sqlite import dense_sql
from tinycontext.adapters.sqlite import ivf as sqlite_ivf
from tinycontext.adapters.sqlite.store import SqliteStore
from tinycontext.ports.store import Scope

from .test_vector_mirror import MODEL, _add, _vectors


def test_sqlite_scope_counts_stop_at_their_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dense_sql, "MAX_SCOPE_COUNTS", 3)
    monkeypatch.setattr(sqlite_dense, "MAX_MIRROR_BYTES", 0)  # the SQL path counts scopes
    monkeypatch.setattr(sqlite_ivf, "TRAIN_AT", 40)  # ... once the vectors are clustered
    monkeypatch.setattr(sqlite_ivf, "MIN_CELLS", 4)
    store = SqliteStore(tmp_path / "m.db")
    vectors = _vectors(60)
    for n in range(5):
        _add(store, vectors[12 * n:12 * (n + 1)], 12 * n, session=f"s{n}")
    while store.maintain_index(MODEL):
        pass
    counts = store._search._sql._scope_counts
    for n in range(5):
        hits = store.nearest(vectors[12 * n].tobytes(), MODEL, Scope("episodic", f"s{n}"), 5)
        assert hits[0].memory.session_id == f"s{n}"
        assert len(counts) == min(n + 1, 3)
    assert [key[1].session_id for key in counts] == ["s2", "s3", "s4"]  # the oldest went
    store.close()


def test_postgres_counts_stop_at_their_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pg_dense, "MAX_COUNTS", 3)
    retrieval = pg_dense.PgDenseRetrieval(pool=Any)  # type: ignore[arg-type]
    asked: list[int] = []

    def count(n: int) -> Any:
        return lambda: asked.append(n) or n

    for n in range(5):
        assert retrieval._cached(("scope", n), count(n)) == n
    assert len(retrieval._counts) == 3 and list(retrieval._counts) == [
        ("scope", 2), ("scope", 3), ("scope", 4)]
    assert retrieval._cached(("scope", 4), count(99)) == 4  # still cached: not asked again
    assert asked == [0, 1, 2, 3, 4]


def test_large_counts_are_kept_longer(monkeypatch: pytest.MonkeyPatch) -> None:
    """A count of a large store is reused for longer (it costs a scan and only sizes the
    probe): 2 s up to 40,000 vectors, then 2 s per 40,000."""
    assert sqlite_ivf.count_ttl(100) == sqlite_ivf.count_ttl(40_000) == 2.0
    assert sqlite_ivf.count_ttl(1_000_000) == 50.0
    index, asked = sqlite_ivf.IvfIndex(), []
    now = [1000.0]
    monkeypatch.setattr(sqlite_ivf.time, "monotonic", lambda: now[0])

    class Conn:
        def execute(self, sql: str, params: Any) -> Any:
            asked.append(sql)
            return self

        def fetchone(self) -> tuple[int]:
            return (1_000_000,)

    assert index.rows(Conn(), 1) == 1_000_000
    now[0] += 49.0
    assert index.rows(Conn(), 1) == 1_000_000 and len(asked) == 1  # still the cached count
    now[0] += 2.0
    assert index.rows(Conn(), 1) == 1_000_000 and len(asked) == 2  # 51 s later: counted again
