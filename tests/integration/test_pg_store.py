"""PostgreSQL store beyond the shared contract: migrations, indexes, tenants, walls, secrets."""

from __future__ import annotations

import threading
import time
from array import array
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import psycopg
import pytest

from tests.contract.store_support import KEY, listing, mem, mid, new, vec
from tests.fakes import HashEmbedder
from tests.pg_fixture import admin_url, temporary_database, with_database
from tinycontext.adapters.postgres import dense as pg_dense
from tinycontext.adapters.postgres.connection import SharedPgPool, redact_url
from tinycontext.adapters.postgres.doctor import check_postgres
from tinycontext.adapters.postgres.schema import SCHEMA_VERSION
from tinycontext.adapters.postgres.store import PostgresStore
from tinycontext.app.transfer import iter_stored
from tinycontext.config.engine import TinyContextConfig
from tinycontext.domain.errors import InvalidRequestError, MemoryAlreadySupersededError
from tinycontext.domain.memory import Memory
from tinycontext.ports.store import NewMemory, Scope

EPI = Scope("episodic")


@pytest.fixture
def pg_database(request: pytest.FixtureRequest) -> Iterator[str]:
    with temporary_database(request) as url:
        yield url


def admin(url: str) -> psycopg.Connection:
    """A superuser connection to the test database of `url`."""
    database = url.split("?")[0].rsplit("/", 1)[1]
    return psycopg.connect(with_database(admin_url(), database), autocommit=True)


def random_vectors(n: int, dims: int, seed: int = 7) -> list[bytes]:
    rng = np.random.default_rng(seed)
    data = rng.standard_normal((n, dims)).astype(np.float32)
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    return [row.astype("<f4").tobytes() for row in data]


def bulk(store: PostgresStore, vectors: list[bytes], session: str | None = None,
         start: int = 1, key: str = "rand") -> None:
    items = [
        NewMemory(mem(start + i, f"memory number {start + i}", session=session, key=key), v)
        for i, v in enumerate(vectors)
    ]
    for i in range(0, len(items), 500):
        store.add(items[i:i + 500])


def index_scans(url: str, index: str, above: int, wait: float = 10.0) -> int:
    """Scans of `index` once they exceed `above` (statistics arrive late), else 0."""
    deadline = time.monotonic() + wait
    with admin(url) as conn:
        while time.monotonic() < deadline:
            conn.execute("SELECT pg_stat_clear_snapshot()")
            count = conn.execute("SELECT idx_scan FROM pg_stat_user_indexes "
                                 "WHERE indexrelname = %s", (index,)).fetchone()[0]
            if count > above:
                return int(count)
            time.sleep(0.1)
    return 0


# -- schema ----------------------------------------------------------------------------------
def test_replicas_starting_at_once_migrate_exactly_once(pg_database: str) -> None:
    stores = [PostgresStore(pg_database) for _ in range(6)]
    barrier = threading.Barrier(len(stores))

    def start(store: PostgresStore) -> int:
        barrier.wait()
        return store.count_pending_embeddings(KEY)

    with ThreadPoolExecutor(len(stores)) as pool:
        assert list(pool.map(start, stores)) == [0] * len(stores)
    with admin(pg_database) as conn:
        versions = conn.execute("SELECT version FROM tinycontext.schema_version").fetchall()
        assert [v for (v,) in versions] == list(range(1, SCHEMA_VERSION + 1))
    # One replica migrated from version 0; the others found the schema current.
    assert sorted(s._pool.migrated_from or 0 for s in stores) == [0] + [SCHEMA_VERSION] * 5
    for store in stores:
        store.close()


def test_a_newer_schema_is_refused(pg_database: str) -> None:
    PostgresStore(pg_database).close()  # nothing connects before the first operation
    with admin(pg_database) as conn:
        assert not conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = 'tinycontext'") \
            .fetchone()
    store = PostgresStore(pg_database)
    store.find(mid(1), False)
    store.close()
    with admin(pg_database) as conn:
        conn.execute("INSERT INTO tinycontext.schema_version (version) VALUES (99)")
    with pytest.raises(RuntimeError, match="newer than this TinyContext"):
        PostgresStore(pg_database).find(mid(1), False)


def test_one_hnsw_index_per_dimension(pg_database: str) -> None:
    store = PostgresStore(pg_database)
    odd = HashEmbedder(dimensions=12, key="odd")
    store.add([new(mem(1, "red green")), new(mem(2, "red green", key="odd"), embedder=odd)])
    with admin(pg_database) as conn:
        names = {r[0] for r in conn.execute(
            "SELECT indexname FROM pg_indexes WHERE indexdef LIKE '%USING hnsw%'")}
    assert names == {"memories_hnsw_64", "memories_hnsw_12",  # live and replaced versions
                     "memories_replaced_hnsw_64", "memories_replaced_hnsw_12"}
    assert [h.memory.id for h in store.nearest(vec("red green"), KEY, EPI, 5)] == [mid(1)]
    assert [h.memory.id for h in store.nearest(vec("red green", odd), "odd", EPI, 5)] == [mid(2)]
    store.close()


# -- dense search at scale -------------------------------------------------------------------
def test_large_scopes_use_the_hnsw_index_and_agree_with_exact_search(pg_database: str) -> None:
    store = PostgresStore(pg_database)
    vectors = random_vectors(pg_dense.EXACT_SCOPE + 1000, 32)
    bulk(store, vectors)
    matrix = np.frombuffer(b"".join(vectors), dtype="<f4").reshape(len(vectors), 32)
    with admin(pg_database) as conn:
        conn.execute("ANALYZE tinycontext.memories")
        before = conn.execute("SELECT idx_scan FROM pg_stat_user_indexes "
                              "WHERE indexrelname = 'memories_hnsw_32'").fetchone()[0]
    overlap = 0
    queries = random_vectors(20, 32, seed=99)
    for query in queries:
        exact = np.argsort(-(matrix @ np.frombuffer(query, dtype="<f4")))[:10]
        hits = store.nearest(query, "rand", EPI, 10)
        assert len(hits) == 10
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        overlap += len({mid(int(i) + 1) for i in exact} & {h.memory.id for h in hits})
    store.close()  # backends flush their statistics when they exit
    assert index_scans(pg_database, "memories_hnsw_32", above=before)  # the index answered
    assert overlap / (10 * len(queries)) >= 0.95


def test_a_small_scope_inside_a_large_index_still_gets_every_match(
    pg_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = PostgresStore(pg_database)
    bulk(store, random_vectors(3000, 32), session="big")
    bulk(store, random_vectors(30, 32, seed=3), session="tiny", start=5000)
    monkeypatch.setattr(pg_dense, "SMALL_SCOPE", 10)  # force the index path for "tiny"
    monkeypatch.setattr(pg_dense, "EXACT_SCOPE", 10)
    with admin(pg_database) as conn:
        conn.execute("ANALYZE tinycontext.memories")
    hits = store.nearest(random_vectors(1, 32, seed=4)[0], "rand", Scope("episodic", "tiny"), 25)
    assert len(hits) == 25 and {h.memory.session_id for h in hits} == {"tiny"}
    store.close()


# -- tenants ---------------------------------------------------------------------------------
def stock(store: PostgresStore) -> None:
    store.add([new(mem(1, "shared wording about apples", session="s")),
               new(mem(2, f"only in tenant {store.tenant!r}"), vector=False)])


def test_tenants_share_tables_but_never_rows(pg_database: str) -> None:
    a, b = PostgresStore(pg_database, tenant="a" * 64), PostgresStore(pg_database, tenant="b" * 64)
    stock(a)
    stock(b)  # the same ids in another tenant are other memories
    a.mark_recalled([mid(1)], "2026-07-02T00:00:00Z")
    [in_b] = b.find(mid(1), False)
    assert in_b.recall_count == 0 and len(a.find(mem(1, "x").ref, True)) == 1
    for store in (a, b):
        assert [h.memory.id for h in store.keyword_search([["apples"]], EPI, 10)] == [mid(1)]
        assert [h.memory.id for h in store.nearest(vec("apples"), KEY, EPI, 10)] == [mid(1)]
        assert store.browse(listing()).total_count == 2
        assert store.session_exists("s") and store.count_pending_embeddings(KEY) == 1
    a.delete(mid(1), None, None)
    assert a.find(mid(1), False) == [] and len(b.find(mid(1), False)) == 1
    assert b.keyword_search([["apples"]], EPI, 10)[0].memory.id == mid(1)
    a.close()
    b.close()


def test_tenant_stores_over_one_shared_pool_close_without_closing_it(pg_database: str) -> None:
    shared = SharedPgPool(pg_database, max_size=3)
    a, b = PostgresStore(shared, tenant="a" * 64), PostgresStore(shared, tenant="b" * 64)
    stock(a)
    stock(b)
    assert a._pool.shared is b._pool.shared is shared and shared.is_open
    a.close()  # one tenant's store going away (an LRU eviction) leaves the pool to the rest
    assert shared.is_open and b.browse(listing()).total_count == 2
    assert a._indexed is b._indexed and a._indexed  # dense indexes are per database
    shared.close()
    assert not shared.is_open


def test_row_level_security_hides_other_tenants_from_a_query_without_filter(
    pg_database: str,
) -> None:
    a, b = PostgresStore(pg_database, tenant="tenant-a"), PostgresStore(pg_database, tenant="t-b")
    stock(a)
    stock(b)
    user = psycopg.conninfo.conninfo_to_dict(pg_database)["user"]
    with admin(pg_database) as conn:
        role = conn.execute("SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = %s",
                            (user,)).fetchone()
    assert role == (False, False)  # superusers and BYPASSRLS roles would skip the policies
    # The store's own transactions set the tenant: a query that forgot `WHERE tenant = ...`
    # still returns only that tenant's rows.
    everything = "SELECT tenant, content FROM tinycontext.memories ORDER BY content"
    assert {t for t, _ in a._pool.read(everything)} == {"tenant-a"}
    assert {t for t, _ in b._pool.read(everything)} == {"t-b"}
    assert a._pool.read("SELECT tenant FROM tinycontext.sessions") == [("tenant-a",)]
    with psycopg.connect(pg_database) as conn:
        assert conn.execute(everything).fetchall() == []  # no tenant set: nothing at all
        conn.execute("SELECT set_config('tinycontext.tenant', 't-b', true)")
        assert conn.execute("UPDATE tinycontext.memories SET recall_count = 9").rowcount == 2
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("UPDATE tinycontext.memories SET tenant = 'tenant-a'")
    assert [m.recall_count for m in a.find(mid(1), False)] == [0]
    a.close()
    b.close()


# -- concurrency -----------------------------------------------------------------------------
def test_concurrent_recall_marks_and_supersedes(pg_database: str) -> None:
    one, two = PostgresStore(pg_database), PostgresStore(pg_database)
    one.add([new(mem(i, f"note {i}")) for i in range(1, 21)])
    ids = [mid(i) for i in range(1, 21)]

    def mark(round_: int) -> None:
        store = one if round_ % 2 else two
        chosen = ids[round_ % 7:] + ids[: round_ % 7]  # overlapping sets, different orders
        store.mark_recalled(chosen, "2026-07-03T00:00:00Z")

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(mark, range(40)))
    assert {m.recall_count for i in ids for m in one.find(i, False)} == {40}

    def replace(store: PostgresStore, n: int) -> str:
        try:
            update = new(mem(n, f"note 1 v{n}", supersedes=mid(1)))
            store.supersede(mid(1), update, "2026-07-04T00:00:00Z")
            return "ok"
        except MemoryAlreadySupersededError:
            return "refused"

    with ThreadPoolExecutor(2) as pool:
        outcomes = sorted(pool.map(replace, [one, two], [101, 102]))
    assert outcomes == ["ok", "refused"]
    one.close()
    two.close()


# -- data fidelity and errors ----------------------------------------------------------------
def test_export_reads_back_every_field_and_exact_vectors(pg_database: str) -> None:
    store = PostgresStore(pg_database)
    vector = array("f", [0.1, -1e-8, 3.4028235e38, 1.17549435e-38, 0.333333343]).tobytes()
    kept = mem(1, "Crème brûlée 🍕", session="s", recall_count=3,
               last_recalled_at="2026-07-02T00:00:00Z", key="five")
    store.add([NewMemory(kept, vector), new(mem(2, "no vector"), vector=False)])
    exported = list(iter_stored(store))
    assert exported == [(kept, vector), (Memory(mid(2), "no vector", "episodic", None,
                                                 "2026-07-01T00:00:00Z", 2), None)]
    assert [m.id for m, _ in iter_stored(store, "s")] == [mid(1)]
    store.close()


def test_export_decodes_a_row_exactly_as_every_other_read(pg_database: str) -> None:
    # Every field set somewhere (a replaced version, a recalled one, one without a vector):
    # the export's decoding and find's must agree field for field, in store order.
    store = PostgresStore(pg_database)
    store.add([new(mem(1, "first version", session="s")), new(mem(3, "bare"), vector=False)])
    store.supersede(mid(1), new(mem(2, "second version", session="s", supersedes=mid(1))),
                    "2026-07-03T00:00:00Z")
    store.mark_recalled([mid(2)], "2026-07-04T05:06:07Z")
    exported = [m for m, _ in iter_stored(store)]
    found = [store.find(m.id, False)[0] for m in exported]
    assert exported == found
    assert [m.id for m in exported] == [mid(1), mid(3), mid(2)]
    assert exported[0].superseded_by == mid(2) and exported[2].supersedes == mid(1)
    assert exported[2].last_recalled_at == "2026-07-04T05:06:07Z"
    store.close()


def test_a_nul_character_is_a_clear_error_and_stores_nothing(pg_database: str) -> None:
    store = PostgresStore(pg_database)
    with pytest.raises(InvalidRequestError, match="NUL"):
        store.add([new(mem(1, "fine")), new(mem(2, "bad \x00 byte"))])
    assert store.find(mid(1), False) == []
    store.close()


# -- secrets ---------------------------------------------------------------------------------
SECRET = "s3cr3t-Pa55"


def test_passwords_never_show(pg_database: str) -> None:
    assert redact_url(f"postgresql://u:{SECRET}@db:5432/x?sslmode=require") \
        == "postgresql://u:***@db:5432/x?sslmode=require"
    assert SECRET not in redact_url(f"postgresql://db/x?user=u&password={SECRET}")
    config = TinyContextConfig(store_url=f"postgresql://u:{SECRET}@db/x")
    assert SECRET not in repr(config) and SECRET not in str(config)
    # The test server trusts local connections, so a password in the URL is accepted.
    user = psycopg.conninfo.conninfo_to_dict(pg_database)["user"]
    url = pg_database.replace(f"//{user}@", f"//{user}:{SECRET}@")
    store = PostgresStore(url)
    assert SECRET not in repr(store)
    store.add([new(mem(1, "x"))])
    facts = store.diagnostics()
    assert SECRET not in str(facts) and facts["live_memories"] == 1
    assert facts["schema_version"] == SCHEMA_VERSION and facts["vector_version"]
    checks = check_postgres(url)
    assert [ok for _, ok, _ in checks] == [True, True, True] and SECRET not in str(checks)
    broken = check_postgres(url.replace(pg_database.split("?")[0].rsplit("/", 1)[1], "nope"))
    assert broken[0][1] is False and SECRET not in str(broken)
    store.close()


def test_keyword_fast_path_keeps_ties_and_falls_back_when_short(pg_database: str) -> None:
    store = PostgresStore(pg_database)
    store.add([new(mem(i, "same words here", created=f"2026-07-{1 + i % 28:02d}T00:00:00Z"))
               for i in range(1, 121)])
    expected = sorted((m for i in range(1, 121) for m in store.find(mid(i), False)),
                      key=lambda m: (m.created_at, [-ord(c) for c in m.id]), reverse=True)
    hits = store.keyword_search([["same"]], EPI, 5)  # 120 tied candidates, 30 looked up
    assert [h.memory.id for h in hits] == [m.id for m in expected[:5]]
    # The best-scored candidates all superseded: the short fast path falls back to all hits.
    store.add([new(mem(500 + i, "same same same words", created="2026-08-01T00:00:00Z"))
               for i in range(40)])
    for i in range(40):
        store.supersede(mid(500 + i), new(mem(600 + i, f"replacement {i}")), "2026-08-02T00:00:00Z")
    hits = store.keyword_search([["same"]], EPI, 5)
    assert [h.memory.id for h in hits] == [m.id for m in expected[:5]]
    store.close()


def test_doctor_checks_create_nothing(pg_database: str) -> None:
    checks = {name: (ok, detail) for name, ok, detail in check_postgres(pg_database)}
    assert checks["store"][0] and "PostgreSQL 1" in checks["store"][1]
    assert checks["pgvector"][0] and "vector 0." in checks["pgvector"][1]
    assert checks["schema"][0] and "not created yet" in checks["schema"][1]
    with admin(pg_database) as conn:  # still nothing there
        assert not conn.execute(
            "SELECT 1 FROM pg_namespace WHERE nspname = 'tinycontext'").fetchone()


def test_upgrade_to_v2_backfills_stems_and_context_per_tenant(pg_database: str) -> None:
    from tinycontext.domain.text import recall_terms

    # Related in meaning (the fake's vectors share words), but only the first names pottery.
    first = mem(1, "Melanie signed up for a pottery class at the hall.",
                created="2026-01-01T08:00:00Z")
    second = mem(2, "It starts at the hall next Tuesday, Melanie says.",
                 created="2026-01-01T08:10:00Z")
    later = mem(3, "Bob owns two grey cats.", created="2026-01-01T08:20:00Z")  # unrelated
    store, other = PostgresStore(pg_database), PostgresStore(pg_database, tenant="t2")
    store.add([new(first), new(second), new(later)])
    other.add([new(mem(4, "Pottery classes are full until May."))])
    store.close()
    other.close()
    with admin(pg_database) as conn:  # back to what schema version 1 wrote
        conn.execute("DROP INDEX tinycontext.memories_context")
        conn.execute("DROP INDEX tinycontext.memory_terms_recall")
        conn.execute("ALTER TABLE tinycontext.memories DROP COLUMN context_id, "
                     "DROP COLUMN token_bits")
        conn.execute("ALTER TABLE tinycontext.memory_terms DROP COLUMN recall")
        # What version 5 added (its two indexes go with the column), then version 4
        conn.execute("ALTER TABLE tinycontext.memories DROP COLUMN history_pending")
        conn.execute("DROP INDEX tinycontext.memories_replaced_scope")
        conn.execute("DROP TABLE tinycontext.memory_labels")  # and what version 3 added
        conn.execute("DROP INDEX tinycontext.memories_replaced_until")
        conn.execute("ALTER TABLE tinycontext.memories DROP COLUMN tags, DROP COLUMN metadata")
        conn.execute("DELETE FROM tinycontext.schema_version WHERE version > 1")
    store, other = PostgresStore(pg_database), PostgresStore(pg_database, tenant="t2")
    assert store.contexts([first.id, second.id, later.id]) == {
        second.id: (first.id, first.content)}
    hits = store.keyword_search(recall_terms("pottery classes"), EPI, 10)
    assert [h.memory.id for h in hits] == [first.id, second.id]  # by stem, then by context
    assert [h.memory.id for h in other.keyword_search(recall_terms("pottery"), EPI, 10)] == [
        mid(4)]
    store.close()
    other.close()


def test_upgrade_to_v3_adds_tags_and_supersede_times(pg_database: str) -> None:
    from dataclasses import replace as changed

    from tinycontext.domain.filters import build_filter
    from tinycontext.ports.store import Scope

    store = PostgresStore(pg_database)
    store.add([new(mem(1, "the office is in berlin", created="2026-01-01T08:00:00Z"))])
    store.supersede(mid(1), new(mem(2, "the office is in paris", created="2026-02-01T08:00:00Z",
                                    supersedes=mid(1))), "2026-02-01T08:00:00Z")
    store.close()
    with admin(pg_database) as conn:  # back to what schema version 2 wrote
        conn.execute("ALTER TABLE tinycontext.memories DROP COLUMN history_pending")  # (v5)
        conn.execute("DROP INDEX tinycontext.memories_replaced_scope")  # (version 4's)
        conn.execute("DROP TABLE tinycontext.memory_labels")
        conn.execute("DROP INDEX tinycontext.memories_replaced_until")
        conn.execute("ALTER TABLE tinycontext.memories DROP COLUMN tags, DROP COLUMN metadata")
        conn.execute("UPDATE tinycontext.memories SET superseded_at = NULL")
        conn.execute("DELETE FROM tinycontext.schema_version WHERE version > 2")
    store = PostgresStore(pg_database)
    [old] = store.find(mid(1), is_ref=False)
    assert old.superseded_at == "2026-02-01T08:00:00Z" and old.tags == ()
    then = Scope("episodic", filters=build_filter(as_of="2026-01-15"))
    assert [h.memory.id for h in store.nearest(vec("office"), KEY, then, 5)] == [mid(1)]
    store.add([new(changed(mem(3, "lunch at noon"), tags=("office",)))])
    tagged = Scope("episodic", filters=build_filter(tags=["office"]))
    assert [h.memory.id for h in store.keyword_search([["lunch"]], tagged, 5)] == [mid(3)]
    store.close()
