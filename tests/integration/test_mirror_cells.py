"""A large vector mirror scans only its nearest IVF cells (and a tail of unplaced slots);
smaller mirrors rank exactly as a scan of every vector. Thresholds are shrunk to test size."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tinycontext.adapters.sqlite import dense as sqlite_dense
from tinycontext.adapters.sqlite import hamming as sqlite_hamming
from tinycontext.adapters.sqlite import ivf as sqlite_ivf
from tinycontext.adapters.sqlite import mirror as sqlite_mirror
from tinycontext.adapters.sqlite import mirror_cells, mirror_file
from tinycontext.adapters.sqlite.dense import PREFETCH_MODELS
from tinycontext.adapters.sqlite.mirror import VectorMirror
from tinycontext.adapters.sqlite.store import SqliteStore
from tinycontext.ports.store import Scope

from .test_vector_mirror import EPISODIC, MODEL, _add, _ids, _memory, _vectors

ROW_BYTES = 384 + 48 + 16  # what mirror_cells.serves counts a 384-dimension vector as


@pytest.fixture
def small_cells(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cells from 1,000 vectors on; 16 cells; probes of ~1/8 of the store."""
    monkeypatch.setattr(mirror_cells, "CELLS_FROM_BYTES", 1000 * ROW_BYTES)
    monkeypatch.setattr(mirror_cells, "PROBE_SHARE", 0.125)
    monkeypatch.setattr(mirror_cells, "MIN_PROBE_ROWS", 10)
    monkeypatch.setattr(mirror_cells, "ROWS_PER_RESULT", 10)
    monkeypatch.setattr(mirror_cells, "MIN_TAIL", 50)
    monkeypatch.setattr(mirror_cells, "REFRESH_SECONDS", 0.0)
    monkeypatch.setattr(sqlite_ivf, "TRAIN_AT", 500)
    monkeypatch.setattr(sqlite_ivf, "MIN_CELLS", 16)
    monkeypatch.setattr(sqlite_ivf, "COUNT_TTL_SECONDS", 0.0)
    monkeypatch.setattr(sqlite_ivf, "cell_count", lambda rows: 16)
    monkeypatch.setattr(mirror_file, "MIN_ROWS", 10**9)  # no copies unless a test asks


def _clustered(path: Path, count: int) -> tuple[SqliteStore, np.ndarray]:
    store = SqliteStore(path)
    vectors = _vectors(count)
    _add(store, vectors, 0)
    while store.maintain_index(MODEL):  # what the background upkeep does
        pass
    return store, vectors


def _mirror(store: SqliteStore) -> VectorMirror:
    return next(iter(store._search._mirrors.values()))


def _scanned(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Columns each Hamming pass covered."""
    seen: list[int] = []
    original = sqlite_hamming.hamming

    def spy(columns, bits):  # type: ignore[no-untyped-def]
        seen.append(columns.shape[1])
        return original(columns, bits)

    monkeypatch.setattr(sqlite_mirror, "hamming", spy)
    return seen


def _probed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Slots each cell probe picked."""
    seen: list[int] = []
    original = mirror_cells.CellIndex.slots

    def spy(self, *args):  # type: ignore[no-untyped-def]
        slots = original(self, *args)
        seen.append(len(slots))
        return slots

    monkeypatch.setattr(mirror_cells.CellIndex, "slots", spy)
    return seen


def test_the_threshold_is_exact() -> None:
    rows = mirror_cells.CELLS_FROM_BYTES // ROW_BYTES
    assert not mirror_cells.serves(rows, 384)  # at the old mirror limit: scanned whole
    assert mirror_cells.serves(rows + 1, 384)


def test_below_the_threshold_ranks_as_a_whole_scan(
    tmp_path: Path, small_cells: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, vectors = _clustered(tmp_path / "c.db", 1200)
    queries = _vectors(20, seed=11)
    _ids(store, queries[0])
    assert _mirror(store)._cells.index is not None
    monkeypatch.setattr(mirror_cells, "CELLS_FROM_BYTES", 1200 * ROW_BYTES)  # at the limit
    seen = _scanned(monkeypatch)
    whole = [_ids(store, q, 50) for q in queries]
    assert seen and all(n == 1200 for n in seen)  # every vector, as before the cells
    monkeypatch.setattr(mirror_cells, "MIN_PROBE_ROWS", 10**6)  # cells, every one probed
    monkeypatch.setattr(mirror_cells, "ROWS_PER_RESULT", 10**6)
    monkeypatch.setattr(mirror_cells, "CELLS_FROM_BYTES", 1199 * ROW_BYTES)
    assert [_ids(store, q, 50) for q in queries] == whole
    store.close()


def test_cells_scan_a_share_and_keep_recall(
    tmp_path: Path, small_cells: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, vectors = _clustered(tmp_path / "c.db", 4000)
    assert _ids(store, vectors[5])[0] == _memory(5).id
    seen = _probed(monkeypatch)
    found = 0
    rng = np.random.default_rng(12)  # queries near stored vectors, as real ones are
    queries = vectors[rng.integers(0, 4000, 30)] + 0.04 * rng.standard_normal((30, 384))
    queries = (queries / np.linalg.norm(queries, axis=1, keepdims=True)).astype(np.float32)
    for q in queries:
        exact = {_memory(int(i)).id for i in np.argsort(-(vectors @ q))[:10]}
        found += len(set(_ids(store, q, 200)[:10]) & exact)
    assert seen and max(seen) < 4000 * 0.4  # a probe, not the store
    assert found / (10 * len(queries)) >= 0.9
    store.close()


def test_the_probe_share_is_the_stores_setting(
    tmp_path: Path, small_cells: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`dense_probe_share` (the store's `probe_share`) sets how much of the scope a recall
    pool's probe covers: a wider probe scans more slots and finds no fewer exact neighbours."""
    from tinycontext import TinyContextConfig
    from tinycontext.entry.stores import open_store

    path = tmp_path / "c.db"
    store, vectors = _clustered(path, 4000)
    store.close()
    queries = vectors[:20]
    seen = _probed(monkeypatch)
    probed: dict[float | None, tuple[float, int]] = {}
    for share in (None, 0.5):
        store = open_store(TinyContextConfig(memory_db_path=str(path), dense_probe_share=share))
        assert isinstance(store, SqliteStore)
        _ids(store, queries[0], 200)  # the mirror loaded and grouped by cells
        start = len(seen)
        found = sum(len(set(_ids(store, q, 200)[:10])
                        & {_memory(int(i)).id for i in np.argsort(-(vectors @ q))[:10]})
                    for q in queries)
        probed[share] = (float(np.mean(seen[start:])), found)
        store.close()
    assert probed[None][0] < 4000 * 0.25 < probed[0.5][0]  # PROBE_SHARE 0.125 by default
    assert probed[0.5][1] >= probed[None][1]


def test_new_and_moved_vectors_are_found_once(
    tmp_path: Path, small_cells: None
) -> None:
    store, vectors = _clustered(tmp_path / "c.db", 2000)
    mirror = _mirror(store) if _ids(store, vectors[0]) else None
    assert mirror is not None and mirror._cells.index is not None
    fresh = _vectors(5, seed=21)
    _add(store, fresh, 5000)  # after the grouping: the tail
    for i, v in enumerate(fresh):
        assert _ids(store, v)[0] == _memory(5000 + i).id
    moved = -vectors[7]  # re-embedded far away: another cell, same slot
    store.set_embeddings([(_memory(7).id, moved.tobytes())], MODEL)
    ids = _ids(store, moved, 50)
    assert ids[0] == _memory(7).id and len(ids) == len(set(ids))
    assert [int(mirror._view.seqs[s]) for s in mirror._cells.moved] == [8]  # memory 7: seq 8
    assert _memory(7).id not in _ids(store, vectors[7], 5)
    store.close()


def test_the_grouping_is_rebuilt_past_its_tail_limit(
    tmp_path: Path, small_cells: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, vectors = _clustered(tmp_path / "c.db", 1600)
    _ids(store, vectors[0])
    mirror = _mirror(store)
    first = mirror._cells.index
    assert first is not None and first.covered == 1600
    limit = 150  # over TAIL_SHARE of 1,750 slots (109)
    monkeypatch.setattr(mirror_cells, "MIN_TAIL", limit)
    _add(store, _vectors(limit, seed=31), 9000)
    _ids(store, vectors[0])
    assert mirror._cells.index is first  # 150 unplaced slots: kept
    _add(store, _vectors(1, seed=32), 9500)
    _ids(store, vectors[0])
    again = mirror._cells.index
    assert again is not first and again.covered == 1751 and len(again.tail) == 0
    store.close()


def test_a_new_clustering_regroups_once_the_store_has_retagged(
    tmp_path: Path, small_cells: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, vectors = _clustered(tmp_path / "c.db", 1200)
    _ids(store, vectors[0])
    mirror = _mirror(store)
    assert mirror._cells.index.version == 1
    _add(store, _vectors(4000, seed=41), 20_000)  # grown GROWTH times: re-clustered
    while store.maintain_index(MODEL):
        pass
    conn = store._pool._open()
    assert conn.execute("SELECT max(version) FROM vector_versions").fetchone()[0] == 2
    assert _ids(store, vectors[3])[0] == _memory(3).id
    index = mirror._cells.index
    assert index.version == 2 and len(index.tail) == 0  # tags re-read from SQL
    store.close()


def test_a_batch_of_lookups_matches_one_at_a_time(
    tmp_path: Path, small_cells: None
) -> None:
    store, vectors = _clustered(tmp_path / "c.db", 2000)
    queries = [v.tobytes() for v in _vectors(8, seed=51)]
    batch = store.nearest_many(queries, MODEL, EPISODIC, 5)
    single = [store.nearest(q, MODEL, EPISODIC, 5) for q in queries]
    assert [[h.memory.id for h in r] for r in batch] == [
        [h.memory.id for h in r] for r in single]
    store.close()


def test_the_copy_keeps_the_tags_and_old_copies_are_ignored(
    tmp_path: Path, small_cells: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mirror_file, "MIN_ROWS", 10)
    path = tmp_path / "c.db"
    store, vectors = _clustered(path, 1200)
    queries = _vectors(10, seed=61)
    before = [_ids(store, q, 20) for q in queries]
    store.close()  # writes the copy
    copy = mirror_file.path_for(path, 1)
    assert copy.exists()
    reopened = SqliteStore(path)
    loads: list[int] = []
    load = VectorMirror._load
    monkeypatch.setattr(VectorMirror, "_load", lambda self, conn: (loads.append(1),
                                                                   load(self, conn))[1])
    assert [_ids(reopened, q, 20) for q in queries] == before and not loads
    mirror = _mirror(reopened)
    assert mirror._cells.index is not None and len(mirror._cells.index.tail) == 0
    reopened._search._mirrors.clear()
    reopened.close()
    with open(copy, "rb") as source:  # rewritten as the previous format (no tags)
        meta = json.loads(np.load(source).tobytes())
        arrays = [np.load(source) for _ in range(6)]
    del meta["format"]
    monkeypatch.setattr(mirror_file, "FORMAT", 1)
    assert mirror_file.save(copy, meta, arrays[:5])
    monkeypatch.setattr(mirror_file, "FORMAT", 2)
    again = SqliteStore(path)
    assert [_ids(again, q, 20) for q in queries] == before and loads  # from SQL instead
    again._search._mirrors.clear()
    again.close()


def test_a_store_with_a_copy_restores_it_when_it_opens(
    tmp_path: Path, small_cells: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mirror_file, "MIN_ROWS", 10)
    path = tmp_path / "c.db"
    store, vectors = _clustered(path, 1200)
    before = _ids(store, vectors[9], 20)
    store.close()
    opened = SqliteStore(path)
    assert opened._search._restoring is not None
    opened._search._restoring.join()
    assert _mirror(opened).size() == 1200  # in memory before any search, grouped by cell
    assert _mirror(opened)._cells.index is not None
    assert _mirror(opened)._pos is None  # seq -> slot built only once a change needs it
    assert _ids(opened, vectors[9], 20) == before
    _add(opened, vectors[9:10], 7000)  # a change: now the positions are needed
    assert _ids(opened, vectors[9], 2) == [_memory(9).id, _memory(7000).id]
    assert _mirror(opened)._pos is not None and _mirror(opened).size() == 1201
    before = _ids(opened, vectors[9], 20)
    opened._search._mirrors.clear()
    opened.close()
    monkeypatch.setattr(mirror_file, "MIN_ROWS", 10**9)  # no new copy from here on
    copy = mirror_file.path_for(path, 1)
    copy.write_bytes(copy.read_bytes()[:5000])  # damaged: ignored, the search loads from SQL
    damaged = SqliteStore(path)
    damaged._search._restoring.join()  # type: ignore[union-attr]
    assert _mirror(damaged).size() is None
    assert _ids(damaged, vectors[9], 20) == before
    damaged._search._mirrors.clear()
    damaged.close()
    copy.unlink()
    assert SqliteStore(path)._search._restoring is None  # no copy: no thread


def test_the_mirror_limit_is_exact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlite_dense, "MAX_MIRROR_BYTES", 150 * ROW_BYTES)
    store = SqliteStore(tmp_path / "m.db")
    vectors = _vectors(151)
    _add(store, vectors[:150], 0)
    assert _ids(store, vectors[3])[0] == _memory(3).id and store._search._mirrors  # at it
    _add(store, vectors[150:], 150)
    assert _ids(store, vectors[150])[0] == _memory(150).id
    assert not store._search._mirrors  # one past it: searched in SQL
    store.close()


def test_only_the_first_model_ids_are_prefetched(tmp_path: Path) -> None:
    path = tmp_path / "p.db"
    SqliteStore(path).close()
    mirror_file.path_for(path, PREFETCH_MODELS + 1).write_bytes(b"not a copy")
    assert SqliteStore(path)._search._restoring is None
    mirror_file.path_for(path, PREFETCH_MODELS).write_bytes(b"not a copy")
    opened = SqliteStore(path)
    restoring = opened._search._restoring
    assert restoring is not None
    restoring.join(timeout=30)
    # The junk copy was tried and rejected: nothing is held until a search loads from SQL.
    mirror = opened._search._mirrors.get(PREFETCH_MODELS)
    assert mirror is None or mirror.size() is None
    opened.close()


def test_tags_are_re_read_at_most_once_per_refresh_period(
    tmp_path: Path, small_cells: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, vectors = _clustered(tmp_path / "c.db", 1200)
    _ids(store, vectors[0])
    reads: list[int] = []
    refresh = mirror_cells.refresh_tags
    monkeypatch.setattr(mirror_cells, "refresh_tags",
                        lambda *args: (reads.append(1), refresh(*args))[1])
    monkeypatch.setattr(mirror_cells, "REFRESH_SECONDS", 3600.0)
    _add(store, _vectors(4000, seed=41), 20_000)
    conn = store._pool._open()
    assert store.maintain_index(MODEL)  # re-clustered; no row re-tagged yet
    while _stale(conn) > 3000:  # part of the store re-tagged
        store.maintain_index(MODEL)
    _ids(store, vectors[3])
    assert reads == [1]
    while store.maintain_index(MODEL):  # the rest re-tagged: not re-read within the period
        pass
    for i in range(3):
        assert _ids(store, vectors[i])[0] == _memory(i).id
    assert reads == [1] and len(_mirror(store)._cells.index.tail) > 0
    store.close()


def _stale(conn: object) -> int:
    version = conn.execute("SELECT max(version) FROM vector_versions").fetchone()[0]  # type: ignore[attr-defined]
    return int(conn.execute(  # type: ignore[attr-defined]
        "SELECT count(*) FROM vector_index WHERE cell_key < ?",
        (version << sqlite_ivf.CELL_BITS,)).fetchone()[0])


def test_batched_exact_scores_rank_as_one_query_at_a_time(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "b.db")
    vectors = _vectors(300)
    _add(store, vectors, 0)
    _add(store, vectors[:40], 1000)  # exact duplicates: ties broken by created_at, then id
    _add(store, vectors[40:80], 2000, session="s1")
    queries = [v.tobytes() for v in vectors[:12]] + [_vectors(4, seed=71)[i].tobytes()
                                                    for i in range(4)]
    for scope in (EPISODIC, Scope("episodic", None, exact=True), Scope("episodic", "s1")):
        batch = store.nearest_many(queries, MODEL, scope, 5)
        single = [store.nearest(q, MODEL, scope, 5) for q in queries]
        assert [[(h.memory.id, h.score) for h in r] for r in batch] == [
            [(h.memory.id, h.score) for h in r] for r in single]
        assert any(len({h.score for h in r}) < len(r) for r in batch) or scope.session_id
    store.close()


def test_probe_sizes_for_a_pool_and_for_a_few_neighbours() -> None:
    rows = mirror_cells.probe_rows
    assert rows(200, 1_000_000) == 30_000  # PROBE_SHARE of the scope for a recall pool
    assert rows(5, 1_000_000) == 3_000  # a tenth of that for a save's 5 neighbours
    assert rows(5, 100_000) == 2_000  # never under ROWS_PER_RESULT a result
    assert rows(200, 100_000) == mirror_cells.MIN_PROBE_ROWS  # nor a pool under the floor


def test_writes_by_another_process_reach_the_cells(tmp_path: Path, small_cells: None) -> None:
    path = tmp_path / "c.db"
    writer, vectors = _clustered(path, 1200)
    reader = SqliteStore(path)
    assert _ids(reader, vectors[4])[0] == _memory(4).id
    assert _mirror(reader)._cells.index is not None
    fresh = _vectors(3, seed=81)
    _add(writer, fresh, 8000)  # through another connection: the reader learns from the log
    writer.delete(_memory(4).id, None, None)  # a grouped slot dies
    for i, v in enumerate(fresh):
        assert _ids(reader, v)[0] == _memory(8000 + i).id
    assert _memory(4).id not in _ids(reader, vectors[4], 20)
    reader._search._mirrors.clear()
    reader.close()
    writer.close()


def test_a_copy_claiming_more_than_it_holds_is_ignored(
    tmp_path: Path, small_cells: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mirror_file, "MIN_ROWS", 10)
    path = tmp_path / "c.db"
    store, vectors = _clustered(path, 1200)
    before = _ids(store, vectors[2], 10)
    store.close()
    copy = mirror_file.path_for(path, 1)
    with open(copy, "rb") as source:
        meta = json.loads(np.load(source).tobytes())
        arrays = [np.load(source) for _ in range(6)]
    del meta["format"]
    assert mirror_file.save(copy, {**meta, "n": 10**12}, arrays)  # would be ~430 TB
    monkeypatch.setattr(mirror_file, "MIN_ROWS", 10**9)
    opened = SqliteStore(path)
    opened._search._restoring.join()  # type: ignore[union-attr]
    assert _mirror(opened).size() is None  # nothing restored, nothing allocated
    assert _ids(opened, vectors[2], 10) == before  # loaded from SQL instead
    opened._search._mirrors.clear()
    opened.close()
