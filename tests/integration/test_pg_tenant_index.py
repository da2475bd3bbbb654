"""Many tenants in one PostgreSQL table: a large tenant gets an HNSW index of its own (the
table-wide index filters after its search and comes back short for a small share), small
tenants are searched exactly, and the number of tenant indexes is bounded."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from tests.contract.store_support import mid
from tests.pg_fixture import temporary_database
from tinycontext.adapters.postgres import dense as pg_dense
from tinycontext.adapters.postgres.store import PostgresStore
from tinycontext.adapters.postgres.tenant_index import tenant_index_name
from tinycontext.ports.store import Scope

from .test_pg_store import admin, bulk, index_scans, random_vectors

EPI = Scope("episodic")
BIG = "o'brien; drop table x --"  # any text is a tenant key: the index predicate quotes it


@pytest.fixture
def pg_database(request: pytest.FixtureRequest) -> Iterator[str]:
    with temporary_database(request) as url:
        yield url


@pytest.fixture(autouse=True)
def _small_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pg_dense, "SMALL_SCOPE", 20)
    monkeypatch.setattr(pg_dense, "EXACT_SCOPE", 100)
    monkeypatch.setattr(pg_dense, "TENANT_INDEX_AT", 500)


def _tenants(url: str, big: dict[str, int], small: int) -> dict[str, list[bytes]]:
    """Tenants of the given sizes plus three of `small` vectors each, then ANALYZE."""
    sizes = {**big, **{f"small-{n}": small for n in range(3)}}
    made = {}
    for seed, (tenant, size) in enumerate(sizes.items()):
        store = PostgresStore(url, tenant=tenant)
        made[tenant] = random_vectors(size, 32, seed=seed)
        bulk(store, made[tenant], key="rand")
        store.close()
    with admin(url) as conn:
        conn.execute("ANALYZE tinycontext.memories")
    return made


def _index_names(url: str) -> set[str]:
    with admin(url) as conn:
        return {r[0] for r in conn.execute(
            "SELECT indexname FROM pg_indexes WHERE indexname LIKE 'memories_hnsw_%'")}


def test_a_large_tenant_gets_its_own_index_and_searches_it(pg_database: str) -> None:
    vectors = _tenants(pg_database, {BIG: 700}, small=300)
    store = PostgresStore(pg_database, tenant=BIG)
    assert store.maintain_index("rand") is True  # built
    assert store.maintain_index("rand") is False  # nothing more to do
    for n in range(3):  # small tenants (under TENANT_INDEX_AT) stay exact
        small = PostgresStore(pg_database, tenant=f"small-{n}")
        assert small.maintain_index("rand") is False
        small.close()
    own = tenant_index_name(BIG, 32)
    assert _index_names(pg_database) == {"memories_hnsw_32", own}
    matrix = np.frombuffer(b"".join(vectors[BIG]), "<f4").reshape(-1, 32)
    found = 0
    queries = random_vectors(15, 32, seed=42)
    for query in queries:
        hits = store.nearest(query, "rand", EPI, 50)
        assert len(hits) == 50 and all(h.memory.id.startswith("") for h in hits)
        exact = np.argsort(-(matrix @ np.frombuffer(query, "<f4")))[:10]
        found += len({mid(int(i) + 1) for i in exact} & {h.memory.id for h in hits[:10]})
    store.close()  # backends flush their statistics when they exit
    assert index_scans(pg_database, own, above=0)  # the planner chose the tenant's index
    assert found / (10 * len(queries)) >= 0.95


def test_a_tenant_that_is_most_of_the_table_uses_the_table_index(pg_database: str) -> None:
    _tenants(pg_database, {"whole": 3000}, small=100)
    store = PostgresStore(pg_database, tenant="whole")
    assert store.maintain_index("rand") is False
    assert _index_names(pg_database) == {"memories_hnsw_32"}
    store.close()


def test_tenant_indexes_stop_at_their_limit(
    pg_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pg_dense, "MAX_TENANT_INDEXES", 1)
    _tenants(pg_database, {"first": 600, "second": 600}, small=700)
    stores = [PostgresStore(pg_database, tenant=t) for t in ("first", "second")]
    assert [s.maintain_index("rand") for s in stores] == [True, False]
    assert _index_names(pg_database) == {"memories_hnsw_32", tenant_index_name("first", 32)}
    hits = stores[1].nearest(random_vectors(1, 32, seed=5)[0], "rand", EPI, 50)
    assert len(hits) == 50  # without an index of its own: the table index, then exact
    for store in stores:
        store.close()


def _counting_probes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every search of an HNSW index (table-wide or a tenant's) appends to the list."""
    probes: list[int] = []
    real = pg_dense.probe_nearest

    def counted(cur: object, dims: int, filters: str, params: list[object]) -> list[object]:
        probes.append(dims)
        return real(cur, dims, filters, params)

    monkeypatch.setattr(pg_dense, "probe_nearest", counted)
    return probes


def test_a_mid_sized_tenant_too_small_a_share_for_the_table_index_goes_exact_at_once(
    pg_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """300 vectors of 2,600 (no index of its own): even at ef_search 1,000 the table index
    would keep ~115 of them, short of a pool of 200, so the store skips both probes."""
    monkeypatch.setattr(pg_dense, "MID_SCOPE", 500)
    vectors = _tenants(pg_database, {"other": 1700}, small=300)
    probes = _counting_probes(monkeypatch)
    store = PostgresStore(pg_database, tenant="small-0")
    matrix = np.frombuffer(b"".join(vectors["small-0"]), "<f4").reshape(-1, 32)
    query = random_vectors(1, 32, seed=9)[0]
    hits = store.nearest(query, "rand", EPI, 200)
    assert probes == []
    exact = np.argsort(-(matrix @ np.frombuffer(query, "<f4")), kind="stable")[:200]
    assert [h.memory.id for h in hits[:20]] == [mid(int(i) + 1) for i in exact[:20]]
    assert len(hits) == 200
    # A pool the index can fill from that share (20: ~115 kept at 1,000) still tries it.
    assert len(store.nearest(query, "rand", EPI, 20)) == 20 and probes
    store.close()


def test_a_missing_table_index_is_looked_up_once_not_per_search(pg_database: str) -> None:
    _tenants(pg_database, {}, small=50)
    with admin(pg_database) as conn:
        conn.execute("DROP INDEX tinycontext.memories_hnsw_32")
    store = PostgresStore(pg_database, tenant="small-1")
    lookups = []
    read = store._pool.read  # noqa: SLF001

    def counted(sql: str, params: object = None) -> list[object]:
        lookups.extend(["pg_indexes"] if "pg_indexes" in sql else [])
        return read(sql, params)

    store._pool.read = counted  # type: ignore[method-assign]  # noqa: SLF001
    query = random_vectors(1, 32, seed=4)[0]
    for _ in range(3):
        assert len(store.nearest(query, "rand", EPI, 10)) == 10
    assert lookups == ["pg_indexes"]
    store.close()


def test_a_tenant_index_is_searched_with_its_own_smaller_ef_search(pg_database: str) -> None:
    """A tenant's own index: TENANT_EF_PER_RESULT x the pool; the table index keeps
    EF_PER_RESULT (its graph holds every tenant and was built insert by insert)."""
    _tenants(pg_database, {BIG: 700, "whole": 2500}, small=50)
    efs: dict[str, list[str]] = {}
    stores = {t: PostgresStore(pg_database, tenant=t) for t in (BIG, "whole")}
    assert stores[BIG].maintain_index("rand") is True
    for tenant, store in stores.items():
        run = store._pool.run  # noqa: SLF001

        def spied(work: object, settings: dict[str, str] | None = None, _t: str = tenant,
                  _run: object = run) -> object:
            efs.setdefault(_t, []).extend([settings["hnsw.ef_search"]]
                                          if settings and "hnsw.ef_search" in settings else [])
            return _run(work, settings)  # type: ignore[operator]

        store._pool.run = spied  # type: ignore[method-assign]  # noqa: SLF001
        assert len(store.nearest(random_vectors(1, 32, seed=6)[0], "rand", EPI, 120)) == 120
        store.close()
    assert efs == {BIG: [str(int(pg_dense.TENANT_EF_PER_RESULT * 120))],
                   "whole": [str(int(pg_dense.EF_PER_RESULT * 120))]}
