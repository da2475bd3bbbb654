"""PostgreSQL "as of" through the replaced versions' HNSW index: the in-place upgrade to
schema version 4 builds it (and the replaced-scope index) on an existing store, searches use
it, and a probe that falls short is widened or searched exactly without losing a row."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.contract.store_support import KEY, mem, mid, new, vec
from tests.integration.test_pg_store import admin, index_scans
from tests.pg_fixture import temporary_database
from tinycontext.adapters.postgres import as_of as pg_as_of
from tinycontext.adapters.postgres.schema import SCHEMA_VERSION
from tinycontext.adapters.postgres.store import PostgresStore
from tinycontext.domain.filters import build_filter
from tinycontext.ports.store import Scope

REPLACED_INDEX = "memories_replaced_hnsw_64"


@pytest.fixture
def pg_database(request: pytest.FixtureRequest) -> Iterator[str]:
    with temporary_database(request) as url:
        yield url


def _history(store: PostgresStore) -> None:
    """Twelve memories in January; the first six replaced in February."""
    for n in range(12):
        store.add([new(mem(n, f"office note {n} about berlin", created=f"2026-01-{n + 1:02d}"
                           "T08:00:00Z"))])
    for n in range(6):
        at = f"2026-02-{n + 1:02d}T08:00:00Z"
        store.supersede(mid(n), new(mem(100 + n, f"office note {n} about paris", created=at,
                                        supersedes=mid(n))), at)


def _indexes(url: str) -> set[str]:
    with admin(url) as conn:
        return {r[0] for r in conn.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = 'tinycontext' "
            "AND indexname LIKE 'memories\\_replaced%'")}


def test_upgrade_to_v4_builds_the_replaced_indexes_and_as_of_uses_them(
        pg_database: str) -> None:
    store = PostgresStore(pg_database)
    _history(store)
    store.close()
    with admin(pg_database) as conn:  # back to what schema version 3 wrote
        conn.execute("DROP INDEX tinycontext.memories_replaced_scope")
        conn.execute(f"DROP INDEX tinycontext.{REPLACED_INDEX}")
        conn.execute("DELETE FROM tinycontext.schema_version WHERE version > 3")
    assert _indexes(pg_database) == {"memories_replaced_until"}
    store = PostgresStore(pg_database)
    mid_january = Scope("episodic", filters=build_filter(as_of="2026-01-20"))
    hits = store.nearest(vec("office note berlin"), KEY, mid_january, 20)
    # As of 20 January every memory was in its first version (the Berlin ones).
    assert sorted(h.memory.id for h in hits) == sorted(mid(n) for n in range(12))
    assert store._pool.migrated_from == 3
    assert _indexes(pg_database) == {"memories_replaced_until", "memories_replaced_scope",
                                     REPLACED_INDEX}
    with admin(pg_database) as conn:
        assert conn.execute("SELECT max(version) FROM tinycontext.schema_version"
                            ).fetchone()[0] == SCHEMA_VERSION == 4
    store.close()  # its connections report their statistics as they end
    assert index_scans(pg_database, REPLACED_INDEX, above=0)  # the probe read it


def test_as_of_probes_falling_short_widen_then_go_exact(
        pg_database: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a first probe of a single candidate per part, every part comes back short of
    the answer's depth: the answer is still every version live then, best first."""
    store = PostgresStore(pg_database)
    _history(store)
    tried: list[int] = []
    search = pg_as_of._search

    def counting(pool, dims, text, part, limit, ef):  # type: ignore[no-untyped-def]
        tried.append(ef)
        return search(pool, dims, text, part, limit, ef)

    monkeypatch.setattr(pg_as_of, "_search", counting)
    monkeypatch.setattr(pg_as_of, "EF_PER_RESULT", 0.001)  # the first probe: `limit` (5)
    monkeypatch.setattr(pg_as_of, "EF_SEARCH_MAX", 5)  # the "widest" one: the same
    early_february = Scope("episodic", filters=build_filter(as_of="2026-02-03T12:00:00Z"))
    hits = store.nearest(vec("office note paris"), KEY, early_february, 12)
    live_then = {mid(100 + n) for n in range(3)} | {mid(n) for n in range(3, 12)}
    assert {h.memory.id for h in hits} == live_then
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert 0 in tried  # at least one part was searched exactly after its probes
    store.close()
