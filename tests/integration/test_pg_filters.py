"""PostgreSQL filtered dense search at a size where the HNSW index serves unfiltered recall:
tags, windows and "as of" (live versions through the index as a window, replaced ones
exactly) give the same top results as brute force over the rows that pass."""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np
import pytest

from tests.contract.store_support import mem, mid
from tests.integration.test_pg_store import admin, random_vectors
from tests.pg_fixture import temporary_database
from tinycontext.adapters.postgres import dense as pg_dense
from tinycontext.adapters.postgres.store import PostgresStore
from tinycontext.domain.filters import build_filter
from tinycontext.ports.store import NewMemory, Scope

SIZE = pg_dense.EXACT_SCOPE + 1000  # large enough for the index path
BASE = 1_780_000_000
OLD = 100_000  # id offset of the older versions


def stamp(minute: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(BASE + int(minute * 60)))


@pytest.fixture(scope="module")
def history(request: pytest.FixtureRequest) -> Iterator[tuple[PostgresStore, list[dict]]]:
    """Memory n made at minute n; every third one replaced its older version (made at minute
    n / 2 + 0.5) at minute n; every 100th carries the tag `rare`."""
    vectors = random_vectors(SIZE + SIZE // 3 + 1, 32)
    rows: list[dict] = []
    items: list[NewMemory] = []
    for n in range(SIZE):
        tags = ("rare",) if n % 100 == 0 else ()
        older = n % 3 == 0 and n > 0
        if older:
            rows.append({"id": mid(OLD + n), "created": stamp(n / 2 + 0.5),
                         "replaced": stamp(n), "tags": tags, "vector": vectors[SIZE + n // 3]})
            items.append(NewMemory(mem(OLD + n, f"old {n}", created=stamp(n / 2 + 0.5),
                                       key="rand", superseded_by=mid(n),
                                       superseded_at=stamp(n), tags=tags),
                                   vectors[SIZE + n // 3]))
        rows.append({"id": mid(n), "created": stamp(n), "replaced": None, "tags": tags,
                     "vector": vectors[n]})
        items.append(NewMemory(mem(n, f"memory {n}", created=stamp(n), key="rand",
                                   supersedes=mid(OLD + n) if older else None, tags=tags),
                               vectors[n]))
    with temporary_database(request) as url:
        store = PostgresStore(url)
        for i in range(0, len(items), 500):
            store.add(items[i:i + 500])
        with admin(url) as conn:
            conn.execute("ANALYZE tinycontext.memories")
        yield store, rows
        store.close()


def exact_scores(rows: list[dict], query: bytes, limit: int, as_of: str | None = None,
                 tag: str | None = None, since: str | None = None) -> list[float]:
    def passes(r: dict) -> bool:
        if as_of is None:
            alive = r["replaced"] is None
        else:
            alive = r["created"] <= as_of and (r["replaced"] is None or r["replaced"] > as_of)
        return alive and (tag is None or tag in r["tags"]) and (
            since is None or r["created"] >= since)

    q = np.frombuffer(query, "<f4")
    scores = [float(np.frombuffer(r["vector"], "<f4") @ q) for r in rows if passes(r)]
    return sorted(scores, reverse=True)[:limit]


@pytest.mark.parametrize("case", [
    {"as_of": stamp(SIZE * 0.15 + 0.25)}, {"as_of": stamp(SIZE * 0.6 + 0.25)},
    {"as_of": stamp(SIZE - 1)}, {"as_of": stamp(-5)}, {"tag": "rare"},
    {"tag": "rare", "as_of": stamp(SIZE * 0.5 + 0.25)}, {"since": stamp(SIZE * 0.97)},
])
def test_filtered_search_matches_brute_force(history, case) -> None:  # type: ignore[no-untyped-def]
    store, rows = history
    filters = build_filter(tags=[case["tag"]] if "tag" in case else None,
                           as_of=case.get("as_of"), since=case.get("since"))
    found = wanted = 0
    for query in random_vectors(8, 32, seed=41):
        hits = store.nearest(query, "rand", Scope("episodic", filters=filters), 20)
        want = exact_scores(rows, query, 20, case.get("as_of"), case.get("tag"),
                            case.get("since"))
        assert len(hits) == len(want)  # never short: the filter applies before the limit
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        found += sum(1 for h in hits if want and h.score >= want[-1] - 1e-5)
        wanted += len(want)
        if "as_of" in case:
            moment = case["as_of"]
            assert all(h.memory.created_at <= moment for h in hits)
            assert all(h.memory.superseded_at is None or h.memory.superseded_at > moment
                       for h in hits)
    assert found >= 0.95 * wanted  # the index path is approximate; exact paths find all


def test_pending_replaced_versions_are_found_before_and_after_upkeep(history) -> None:  # type: ignore[no-untyped-def]
    """Versions replaced since the last upkeep sit outside the replaced versions' HNSW index
    and are searched exactly: "as of" a moment before their updates finds them (each one's
    own vector finds it first) and agrees with brute force, before and after the upkeep moves
    them into the index. The new versions are deleted at the end, so the old ones are live
    again for any later test."""
    store, rows = history
    chosen = [n for n in range(1, SIZE, 97) if n % 3 != 0][:24]
    fresh = random_vectors(len(chosen), 32, seed=77)
    before = stamp(SIZE + 0.5)  # after every creation, before these updates
    by_id = {r["id"]: r for r in rows}
    now = [dict(r) for r in rows]
    current = {r["id"]: r for r in now}
    for k, n in enumerate(chosen):
        at = stamp(SIZE + 1 + k)
        store.supersede(mid(n), NewMemory(mem(2 * OLD + n, f"memory {n} again", created=at,
                                              key="rand", supersedes=mid(n)), fresh[k]), at)
        current[mid(n)]["replaced"] = at
        now.append({"id": mid(2 * OLD + n), "created": at, "replaced": None, "tags": (),
                    "vector": fresh[k]})
    scope = Scope("episodic", filters=build_filter(as_of=before))

    def check() -> None:
        for n in chosen[:8]:
            hits = store.nearest(by_id[mid(n)]["vector"], "rand", scope, 10)
            assert hits[0].memory.id == mid(n)
        for query in random_vectors(6, 32, seed=43):
            hits = store.nearest(query, "rand", scope, 20)
            want = exact_scores(now, query, 20, before)
            assert len(hits) == len(want)
            assert sum(1 for h in hits if h.score >= want[-1] - 1e-5) >= 0.95 * len(want)

    def pending() -> int:
        return int(store._pool.read(  # noqa: SLF001
            "SELECT count(*) FROM tinycontext.memories WHERE history_pending", [])[0][0])

    assert pending() == len(chosen)
    check()  # pending: outside the index, searched exactly
    while store.maintain_index("rand"):
        pass
    assert pending() == 0
    check()  # moved into the index
    for n in chosen:
        store.delete(mid(2 * OLD + n), mid(n), None)
