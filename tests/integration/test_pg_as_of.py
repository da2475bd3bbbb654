"""PostgreSQL "as of" through the replaced versions' HNSW index: the in-place upgrades to
schema versions 4 and 5 build it (and the replaced-scope index) on an existing store,
searches use it, an update leaves the old version pending outside it until the upkeep moves
it in (found exactly meanwhile, the same answer either way), and a probe that falls short is
widened or searched exactly without losing a row."""

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


def _versions(url: str) -> list[tuple[str, ...]]:
    """Every version with its links and supersede time (what an upgrade must keep)."""
    with admin(url) as conn:
        return [tuple(str(v) for v in r) for r in conn.execute(
            "SELECT id, supersedes, superseded_by, superseded_at, created_at "
            "FROM tinycontext.memories ORDER BY id")]


def _answers_as_of_each_moment(store: PostgresStore) -> None:
    """_history's versions live at three moments: before, during and after the updates."""
    def ids(moment: str) -> set[str]:
        scope = Scope("episodic", filters=build_filter(as_of=moment))
        return {h.memory.id for h in store.nearest(vec("office note"), KEY, scope, 20)}

    assert ids("2026-01-20") == {mid(n) for n in range(12)}
    assert ids("2026-02-03T12:00:00Z") == ({mid(100 + n) for n in range(3)}
                                           | {mid(n) for n in range(3, 12)})
    assert ids("2026-03-01") == {mid(100 + n) for n in range(6)} | {mid(n) for n in range(6, 12)}


def _indexes(url: str) -> set[str]:
    with admin(url) as conn:
        return {r[0] for r in conn.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = 'tinycontext' "
            "AND indexname LIKE 'memories\\_replaced%'")}


def _taken_back(url: str, version: int, *statements: str) -> list[tuple[str, ...]]:
    """A store with _history whose schema `statements` take back to what `version` wrote;
    returns its versions (what the upgrade must keep)."""
    store = PostgresStore(url)
    _history(store)
    store.close()
    versions = _versions(url)
    with admin(url) as conn:
        for statement in statements:
            conn.execute(statement)
        conn.execute("DELETE FROM tinycontext.schema_version WHERE version > %s", (version,))
    return versions


def _upgraded(url: str, version: int, versions: list[tuple[str, ...]]) -> PostgresStore:
    """The store taken back to `version`, opened again (which upgrades it), its answers
    checked: none of its versions lost, each moment's versions found."""
    store = PostgresStore(url)
    mid_january = Scope("episodic", filters=build_filter(as_of="2026-01-20"))
    hits = store.nearest(vec("office note berlin"), KEY, mid_january, 20)
    # As of 20 January every memory was in its first version (the Berlin ones).
    assert sorted(h.memory.id for h in hits) == sorted(mid(n) for n in range(12))
    assert store._pool.migrated_from == version
    assert _versions(url) == versions and len(versions) == 18  # none lost
    _answers_as_of_each_moment(store)
    return store


def test_upgrade_to_v4_builds_the_replaced_indexes_and_as_of_uses_them(
        pg_database: str) -> None:
    # Back to what schema version 3 wrote (the replaced versions' index goes with the
    # column its predicate names).
    versions = _taken_back(pg_database, 3,
                           "ALTER TABLE tinycontext.memories DROP COLUMN history_pending",
                           "DROP INDEX tinycontext.memories_replaced_scope")
    assert _indexes(pg_database) == {"memories_replaced_until"}
    store = _upgraded(pg_database, 3, versions)
    assert _indexes(pg_database) == {"memories_replaced_until", "memories_replaced_scope",
                                     REPLACED_INDEX}
    with admin(pg_database) as conn:
        assert conn.execute("SELECT max(version) FROM tinycontext.schema_version"
                            ).fetchone()[0] == SCHEMA_VERSION == 5
    store.close()  # its connections report their statistics as they end
    assert index_scans(pg_database, REPLACED_INDEX, above=0)  # the probe read it


def _pending(url: str) -> list[str]:
    with admin(url) as conn:
        return [r[0] for r in conn.execute(
            "SELECT id FROM tinycontext.memories WHERE history_pending ORDER BY id")]


def _index_definition(url: str) -> str:
    with admin(url) as conn:
        return str(conn.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s",
                                (REPLACED_INDEX,)).fetchone()[0])


def test_upgrade_from_v4_rebuilds_the_replaced_index_without_pending_versions(
        pg_database: str) -> None:
    versions = _taken_back(  # back to what schema version 4 wrote
        pg_database, 4, "ALTER TABLE tinycontext.memories DROP COLUMN history_pending",
        f"CREATE INDEX {REPLACED_INDEX} ON tinycontext.memories USING hnsw "
        "((embedding::vector(64)) vector_cosine_ops) WITH (m = 16, "
        "ef_construction = 64) WHERE dims = 64 AND superseded_by IS NOT NULL")
    store = _upgraded(pg_database, 4, versions)
    assert "history_pending IS NULL" in _index_definition(pg_database)
    assert _pending(pg_database) == []  # the versions replaced before are in the index
    store.close()
    assert index_scans(pg_database, REPLACED_INDEX, above=0)


def test_updates_stay_pending_until_upkeep_and_as_of_answers_the_same(
        pg_database: str, monkeypatch: pytest.MonkeyPatch) -> None:
    store = PostgresStore(pg_database)
    _history(store)
    replaced = sorted(mid(n) for n in range(6))
    assert _pending(pg_database) == replaced  # outside the replaced versions' index
    early_february = Scope("episodic", filters=build_filter(as_of="2026-02-03T12:00:00Z"))
    live_then = {mid(100 + n) for n in range(3)} | {mid(n) for n in range(3, 12)}

    def answer() -> list[tuple[str, float]]:
        return [(h.memory.id, round(h.score, 6))
                for h in store.nearest(vec("office note"), KEY, early_february, 12)]

    pending_answer = answer()
    assert {i for i, _ in pending_answer} == live_then
    # An upkeep step that dies half-way leaves every row pending, and found.
    from tinycontext.adapters.postgres import writing

    def dying(cur, tenant, most):  # type: ignore[no-untyped-def]
        writing_move(cur, tenant, most)
        raise RuntimeError("killed")

    writing_move = writing.move_history
    monkeypatch.setattr(writing, "move_history", dying)
    with pytest.raises(RuntimeError):
        store.maintain_index(KEY)
    monkeypatch.undo()
    assert _pending(pg_database) == replaced and answer() == pending_answer
    steps = 0
    while store.maintain_index(KEY):
        steps += 1
    assert steps >= 1 and _pending(pg_database) == []
    assert answer() == pending_answer  # now through the index: the same answer
    # Deleting the newest version makes the old one live again, never pending.
    store.supersede(mid(7), new(mem(107, "office note 7 about rome",
                                    created="2026-03-01T08:00:00Z", supersedes=mid(7))),
                    "2026-03-01T08:00:00Z")
    assert _pending(pg_database) == [mid(7)]
    store.delete(mid(107), mid(7), None)
    assert _pending(pg_database) == []
    store.close()


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
