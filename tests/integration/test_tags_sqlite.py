"""Tags and "as of" on real SQLite files: the in-place upgrade of a store made by the previous
schema, and filtered dense search with its masks in the mirror and without a mirror (the
path of stores too large to hold in memory), each against brute force."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes import FixedClock, HashEmbedder, WordTokenizer
from tinycontext.adapters.sqlite import dense as sqlite_dense
from tinycontext.adapters.sqlite import dense_filtered
from tinycontext.adapters.sqlite import driver as sqlite_driver
from tinycontext.adapters.sqlite.schema import SCHEMA_VERSION
from tinycontext.adapters.sqlite.store import SqliteStore
from tinycontext.config.engine import TinyContextConfig
from tinycontext.domain.filters import build_filter
from tinycontext.domain.memory import Memory
from tinycontext.entry.container import build_service
from tinycontext.ports.store import NewMemory, Scope

PREVIOUS = 7  # the schema before tags, metadata and the labels index


def _service(path: Path, clock: FixedClock):  # type: ignore[no-untyped-def]
    return build_service(
        TinyContextConfig(memory_db_path=str(path)), store=SqliteStore(path),
        embedder=HashEmbedder(), tokenizer=WordTokenizer(), clock=clock, background=False,
    )


def _as_previous_schema(path: Path) -> None:
    """Turn a store into what schema 7 wrote: no tags, metadata or labels, and (as stores of
    that time could have) replaced versions without their supersede time."""
    conn = sqlite_driver.sqlite_module().connect(str(path))
    conn.execute("DROP INDEX memories_replaced_until")
    conn.execute("DROP TABLE memory_labels")
    conn.execute("ALTER TABLE memories DROP COLUMN tags")
    conn.execute("ALTER TABLE memories DROP COLUMN metadata")
    conn.execute("UPDATE memories SET superseded_at = NULL")
    conn.execute("DELETE FROM vector_index WHERE model_id < 0")
    conn.execute(f"PRAGMA user_version = {PREVIOUS}")
    conn.commit()
    conn.close()


def test_a_store_of_the_previous_schema_is_upgraded_in_place(db_path: Path) -> None:
    clock = FixedClock()
    old = _service(db_path, clock)
    first = old.save([{"content": "the office is in berlin"},
                      {"content": "standup is at nine"}]).to_dict()["saved"]
    clock.advance(86400)
    newer = old.update(first[0]["ref"], "the office is in paris").to_dict()
    old.close()
    _as_previous_schema(db_path)
    conn = sqlite_driver.sqlite_module().connect(str(db_path))
    columns = [r[1] for r in conn.execute("PRAGMA table_info(memories)")]
    conn.close()
    assert "tags" not in columns and "metadata" not in columns

    service = _service(db_path, clock)
    # The supersede time comes back from the successor's creation: "as of" works at once.
    replaced = service.detail(first[0]["ref"]).to_dict()
    assert replaced["superseded_at"] == newer["created_at"]
    then = service.recall("where is the office", as_of="2026-07-31T12:00:00Z").to_dict()
    assert [m["ref"] for m in then["memories"]][0] == first[0]["ref"]
    # Its vector was put back for "as of" (under the model's negative id).
    assert then["memories"][0]["scores"]["dense"] is not None
    now = service.recall("where is the office").to_dict()
    assert [m["ref"] for m in now["memories"]][0] == newer["ref"]
    # Old memories have no tags; new and updated ones take them.
    assert service.detail(first[1]["ref"]).to_dict()["tags"] == []
    tagged = service.update(first[1]["ref"], None, tags=["team"]).to_dict()
    assert [m["ref"] for m in service.list_page(tags=["team"]).to_dict()["memories"]] \
        == [tagged["ref"]]
    conn = sqlite_driver.sqlite_module().connect(str(db_path))
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    conn.close()
    service.close()


def _no_mirror(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Search as a store too large to mirror does, with its sizing step forced (few
    qualifying rows are otherwise scored exactly in SQL)."""
    monkeypatch.setattr(sqlite_dense, "MAX_MIRROR_BYTES", 0)
    monkeypatch.setattr(dense_filtered, "EXACT_ROWS", 20)


@pytest.mark.parametrize("share", [2, 10])
@pytest.mark.parametrize("mirrored", [True, False])
def test_a_filter_finds_its_own_top(db_path: Path, monkeypatch, share, mirrored) -> None:
    """A tag on half or a tenth of the memories: masked in the mirror's scan, or (without
    a mirror) the unfiltered search asked for enough more candidates. The answer must be the
    exact top among the matching ones (dense random vectors, on which the mirror's sign bits
    and int8 codes work as on a model's)."""
    np = pytest.importorskip("numpy")
    if not mirrored:
        _no_mirror(monkeypatch)
    db_path.parent.mkdir()
    store = SqliteStore(db_path)
    rng = np.random.default_rng(7)
    centres = rng.standard_normal((5, 384)).astype(np.float32)
    # Each memory near one of five topics, at its own distance from it: neighbours are
    # clearly ordered, as a model's vectors are (random ones are all about equally far).
    vectors = (centres[np.arange(1500) % 5] * rng.uniform(0.2, 3.0, (1500, 1))
               + rng.standard_normal((1500, 384))).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    items = [
        NewMemory(Memory(f"00000000-0000-4000-8000-{i:012x}", f"memory {i}", "episodic", None,
                         "2026-07-01T00:00:00Z", 2, embedding_model="k",
                         tags=("even",) if i % share == 0 else ()), vectors[i].tobytes())
        for i in range(1500)
    ]
    store.add(items)
    scope = Scope("episodic", filters=build_filter(tags=["even"]))
    hits = 0
    for seed in range(5):
        query = centres[seed] + 0.3 * rng.standard_normal(384).astype(np.float32)
        query /= np.linalg.norm(query)
        scores = vectors @ query
        wanted = sorted(range(0, 1500, share), key=lambda i: -scores[i])[:10]
        found = store.nearest(query.tobytes(), "k", scope, 10)
        assert len(found) == 10 and all(h.memory.tags == ("even",) for h in found)
        hits += len({h.memory.id for h in found} & {items[i].memory.id for i in wanted})
        if mirrored and share == 10:  # fewer than the mirror re-ranks: all scored by codes
            assert [h.memory.id for h in found] == [items[i].memory.id for i in wanted]
    assert hits >= 45  # recall@10 against the exact filtered answer, over 5 queries
    assert any(model_id > 0 for model_id in store._search._mirrors) == mirrored
    store.close()


@pytest.mark.parametrize("mirrored", [True, False])
def test_as_of_ranks_the_versions_live_then(db_path: Path, monkeypatch, mirrored) -> None:
    """Many versions live at the moment asked: the live and the replaced ones are each
    masked by their times in their own mirror (or, without mirrors, found in SQL); the
    answer must match brute force over the versions live then."""
    np = pytest.importorskip("numpy")
    if not mirrored:
        _no_mirror(monkeypatch)
    db_path.parent.mkdir()
    store = SqliteStore(db_path)
    rng = np.random.default_rng(3)
    centres = rng.standard_normal((5, 384)).astype(np.float32)
    rows = []  # (memory, vector)
    for chain in range(400):
        versions = 1 + chain % 3
        for v in range(versions):
            n = len(rows)
            vector = centres[n % 5] * rng.uniform(0.2, 3.0) + rng.standard_normal(384)
            vector = (vector / np.linalg.norm(vector)).astype(np.float32)
            day = 1 + v * 10 + chain % 7  # versions ten days apart
            memory = Memory(
                f"00000000-0000-4000-8000-{n:012x}", f"chain {chain} v{v}", "episodic", None,
                f"2026-01-{day:02d}T00:00:00Z", 3, embedding_model="k",
                superseded_by=f"00000000-0000-4000-8000-{n + 1:012x}" if v + 1 < versions
                else None,
                superseded_at=f"2026-01-{day + 10:02d}T00:00:00Z" if v + 1 < versions
                else None,
                supersedes=f"00000000-0000-4000-8000-{n - 1:012x}" if v else None)
            rows.append((memory, vector))
    store.add([NewMemory(m, v.tobytes()) for m, v in rows])
    moment = "2026-01-15T12:00:00Z"
    live = [(m, v) for m, v in rows if m.created_at <= moment
            and (m.superseded_at is None or m.superseded_at > moment)]
    assert sum(m.superseded_by is not None for m, _ in live) > 100
    scope = Scope("episodic", filters=build_filter(as_of=moment))
    hits = 0
    for seed in range(5):
        query = centres[seed] + 0.3 * rng.standard_normal(384).astype(np.float32)
        query = (query / np.linalg.norm(query)).astype(np.float32)
        found = store.nearest(query.tobytes(), "k", scope, 10)
        best = sorted(live, key=lambda p: -float(p[1] @ query))[:10]
        assert len(found) == 10
        hits += len({h.memory.id for h in found} & {m.id for m, _ in best})
    assert hits >= 45
    # The replaced versions' own mirror.
    assert any(model_id < 0 for model_id in store._search._mirrors) == mirrored
    store.close()
