"""The in-memory mirror behind SQLite dense search: it follows every write, including writes
through another connection (another process), and ranks like an exact search."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tinycontext.adapters.sqlite import dense as sqlite_dense
from tinycontext.adapters.sqlite import ivf as sqlite_ivf
from tinycontext.adapters.sqlite import mirror as sqlite_mirror
from tinycontext.adapters.sqlite.schema import SCHEMA_VERSION
from tinycontext.adapters.sqlite.store import SqliteStore
from tinycontext.domain.memory import Memory
from tinycontext.ports.store import NewMemory, Scope

MODEL = "unit-test-384"
EPISODIC = Scope("episodic")


def _vectors(count: int, dims: int = 384, seed: int = 3) -> np.ndarray:
    """Clustered unit vectors: neighbourhoods like real embeddings have, not pure noise."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((max(1, count // 20), dims))
    points = centres[rng.integers(0, len(centres), count)] + 0.6 * rng.standard_normal(
        (count, dims))
    return (points / np.linalg.norm(points, axis=1, keepdims=True)).astype(np.float32)


def _memory(i: int, session: str | None = None, kind: str = "episodic") -> Memory:
    return Memory(
        id=f"{i:08x}-0000-4000-8000-000000000000", content=f"memory {i}", kind=kind,
        session_id=session, created_at="2026-01-01T00:00:00Z", content_tokens=3,
        embedding_model=MODEL,
    )


def _add(store: SqliteStore, vectors: np.ndarray, start: int, **scope: str | None) -> None:
    store.add([
        NewMemory(_memory(start + i, **scope), v.tobytes())  # type: ignore[arg-type]
        for i, v in enumerate(vectors)
    ])


def _ids(store: SqliteStore, query: np.ndarray, limit: int = 10, scope: Scope = EPISODIC
         ) -> list[str]:
    return [h.memory.id for h in store.nearest(query.tobytes(), MODEL, scope, limit)]


def _loaded_pair(path: Path, vectors: np.ndarray, probe: int) -> tuple[SqliteStore, SqliteStore]:
    """A writer holding `vectors` (from memory 0) and a reader whose mirror has loaded them."""
    reader, writer = SqliteStore(path), SqliteStore(path)
    _add(writer, vectors, 0)
    assert _ids(reader, vectors[probe])[0] == _memory(probe).id
    return reader, writer


def _mirrored(store: SqliteStore) -> bool:
    return bool(store._search._mirrors)


def test_mirror_ranks_like_an_exact_search(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "m.db")
    vectors = _vectors(3000)
    _add(store, vectors, 0)
    queries = _vectors(40, seed=9)
    found = 0
    for query in queries:
        exact = np.argsort(-(vectors @ query))[:10]
        hits = store.nearest(query.tobytes(), MODEL, EPISODIC, 200)[:10]  # a recall's pool
        found += len({h.memory.id for h in hits} & {_memory(int(i)).id for i in exact})
        # sqlite-vec's exact cosine is the score and orders the result
        scores = [h.score for h in hits]
        expected = [float(vectors[int(h.memory.content.split()[1])] @ query) for h in hits]
        assert np.allclose(scores, expected, atol=1e-5) and scores == sorted(scores, reverse=True)
    assert _mirrored(store)
    assert found / (10 * len(queries)) >= 0.95
    store.close()


def test_writes_through_another_connection_are_seen(tmp_path: Path) -> None:
    vectors = _vectors(300)
    reader, writer = _loaded_pair(tmp_path / "m.db", vectors, 5)
    assert _mirrored(reader)

    fresh = _vectors(1, seed=42)
    _add(writer, fresh, 1000)  # insert
    assert _ids(reader, fresh[0])[0] == _memory(1000).id

    writer.delete(_memory(5).id, None, None)  # delete
    assert _memory(5).id not in _ids(reader, vectors[5], 50)

    replacement = _memory(2000)
    writer.supersede(_memory(7).id, NewMemory(replacement, vectors[7].tobytes()), "2026-01-02")
    top = _ids(reader, vectors[7])
    assert top[0] == replacement.id and _memory(7).id not in top

    moved = _vectors(1, seed=77)[0]  # re-embedded: the row's vector changes in place
    writer.set_embeddings([(_memory(9).id, moved.tobytes())], MODEL)
    assert _ids(reader, moved)[0] == _memory(9).id
    writer.set_embeddings([(_memory(11).id, vectors[11].tobytes())], "another-model")
    assert _memory(11).id not in _ids(reader, vectors[11], 50)
    reader.close()
    assert not _mirrored(reader)  # closing frees the copy (hosted mode closes idle tenants)
    writer.close()


def test_a_pruned_log_makes_the_mirror_reload(tmp_path: Path) -> None:
    vectors = _vectors(200)
    reader, writer = _loaded_pair(tmp_path / "m.db", vectors[:100], 3)
    _add(writer, vectors[100:150], 100)
    conn = writer._pool._open()
    conn.execute("DELETE FROM vector_log")  # what pruning does to a reader left far behind
    _add(writer, vectors[150:], 150)
    assert _ids(reader, vectors[120])[0] == _memory(120).id
    assert _ids(reader, vectors[180])[0] == _memory(180).id
    mirror = next(iter(reader._search._mirrors.values()))
    assert len(mirror._pos) == 200
    reader.close()
    writer.close()


def test_log_pruning_keeps_the_latest_entries(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "m.db")
    conn = store._pool._open()
    conn.executemany("INSERT INTO vector_log(id, seq) VALUES (?, 0)", [(i,) for i in range(1, 11)])
    conn.execute("UPDATE sqlite_sequence SET seq = 70000 WHERE name = 'vector_log'")
    _add(store, _vectors(4200), 0)  # ids 70,001-74,200: 73,728 is a multiple of 4,096
    low, high, count = conn.execute("SELECT min(id), max(id), count(*) FROM vector_log").fetchone()
    assert (low, high, count) == (70001, 74200, 4200)  # entries <= 73,728 - 65,536 went
    store.close()


def test_scopes_sessions_and_kinds(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "m.db")
    vectors = _vectors(400)
    _add(store, vectors[:200], 0)
    _add(store, vectors[200:300], 200, session="a")
    _add(store, vectors[300:350], 300, session="b")
    _add(store, vectors[350:], 350, kind="profile")
    query = vectors[250]
    in_a = store.nearest(query.tobytes(), MODEL, Scope("episodic", "a"), 500)
    assert len(in_a) == 100 and {h.memory.session_id for h in in_a} == {"a"}
    unsessioned = store.nearest(query.tobytes(), MODEL, Scope("episodic", None, True), 500)
    assert len(unsessioned) == 200 and {h.memory.session_id for h in unsessioned} == {None}
    everywhere = store.nearest(query.tobytes(), MODEL, EPISODIC, 500)
    assert len(everywhere) == 350 and everywhere[0].memory.id == _memory(250).id
    profile = store.nearest(query.tobytes(), MODEL, Scope("profile"), 500)
    assert len(profile) == 50 and {h.memory.kind for h in profile} == {"profile"}
    assert store.nearest(query.tobytes(), MODEL, Scope("episodic", "nope"), 10) == []
    assert store.nearest(query.tobytes(), "unknown-model", EPISODIC, 10) == []
    store.close()


def test_same_answers_whether_loaded_or_followed(tmp_path: Path) -> None:
    early = SqliteStore(tmp_path / "m.db")
    vectors = _vectors(1500, seed=5)
    _add(early, vectors[:10], 0)
    early.nearest(vectors[0].tobytes(), MODEL, EPISODIC, 10)  # mirror loaded with 10 rows
    for start in range(10, 1500, 70):  # then followed through the log, batch by batch
        _add(early, vectors[start:start + 70], start)
        early.delete(_memory(start - 3).id, None, None)
    late = SqliteStore(tmp_path / "m.db")  # loads everything at once, in another slot order
    for query in _vectors(15, seed=8):
        a = early.nearest(query.tobytes(), MODEL, EPISODIC, 100)
        b = late.nearest(query.tobytes(), MODEL, EPISODIC, 100)
        assert [(h.memory.id, h.score) for h in a] == [(h.memory.id, h.score) for h in b]
    early.close()
    late.close()


def test_rows_the_mirror_cannot_hold_fall_back_to_sql(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "m.db")
    vectors = _vectors(100)
    _add(store, vectors, 0)
    store._pool._open().execute("UPDATE vector_index SET codes = NULL WHERE seq = 3")
    assert _ids(store, vectors[40])[0] == _memory(40).id
    assert not _mirrored(store) and store._search._unmirrored


def test_large_stores_search_in_sql(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlite_dense, "MAX_MIRROR_BYTES", 100 * 400)
    store = SqliteStore(tmp_path / "m.db")
    vectors = _vectors(150)
    _add(store, vectors, 0)
    assert _ids(store, vectors[60])[0] == _memory(60).id
    assert not _mirrored(store)


def test_odd_dimensions_are_padded_to_whole_words(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "m.db")
    vectors = _vectors(500, dims=40)  # 5 bytes of sign bits: padded to one 64-bit word
    _add(store, vectors, 0)
    for i in (0, 123, 499):
        assert _ids(store, vectors[i])[0] == _memory(i).id
    assert _mirrored(store)


def test_candidate_count_grows_within_bounds() -> None:
    count = sqlite_mirror.candidate_count
    assert count(200, 0) == count(200, 20_000) == 1000
    assert count(200, 80_000) == 2000  # 5 x sqrt(4)
    assert count(200, 10**7) == 200 * sqlite_mirror.MAX_FACTOR
    assert count(5, 100_000) == sqlite_mirror.MIN_CANDIDATES


def test_a_version_4_store_gets_codes_and_the_log(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    store = SqliteStore(path)
    vectors = _vectors(120)
    _add(store, vectors, 0)
    conn = store._pool._open()
    for trigger in ("insert", "delete", "update"):
        conn.execute(f"DROP TRIGGER vector_log_{trigger}")
    conn.execute("DROP TRIGGER vector_log_prune")
    conn.execute("DROP TABLE vector_log")
    conn.execute("ALTER TABLE vector_index DROP COLUMN codes")
    conn.execute("DROP INDEX memories_context")  # and what version 6 added
    conn.execute("ALTER TABLE memories DROP COLUMN context_id")
    conn.execute("DROP TABLE memory_labels")  # and version 8
    conn.execute("DROP INDEX memories_replaced_until")
    conn.execute("ALTER TABLE memories DROP COLUMN tags")
    conn.execute("ALTER TABLE memories DROP COLUMN metadata")
    conn.execute("PRAGMA user_version = 4")
    store.close()

    upgraded = SqliteStore(path)
    assert _ids(upgraded, vectors[77])[0] == _memory(77).id and _mirrored(upgraded)
    check = upgraded._pool._open()
    assert check.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert check.execute(
        "SELECT count(*) FROM vector_index v JOIN memories m ON m.seq = v.seq "
        "WHERE v.codes = vec_quantize_int8(m.embedding, 'unit')").fetchone()[0] == 120
    _add(upgraded, _vectors(1, seed=50), 500)  # the log works after the upgrade
    assert check.execute("SELECT count(*) FROM vector_log").fetchone()[0] == 1
    upgraded.close()


def test_no_ivf_upkeep_while_the_mirror_serves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_ivf, "TRAIN_AT", 100)
    store = SqliteStore(tmp_path / "m.db")
    _add(store, _vectors(300), 0)
    assert store.maintain_index(MODEL) is False  # no k-means, no re-tagging in the background
    conn = store._pool._open()
    assert conn.execute("SELECT count(*) FROM vector_versions").fetchone()[0] == 0
    monkeypatch.setattr(sqlite_dense, "MAX_MIRROR_BYTES", 0)  # grown past what is mirrored
    monkeypatch.setattr(sqlite_ivf, "COUNT_TTL_SECONDS", 0.0)
    store._ivf._counts.clear()
    while store.maintain_index(MODEL):
        pass
    assert conn.execute("SELECT count(*) FROM vector_versions").fetchone()[0] == 1
    store.close()


def test_a_reload_keeps_the_old_copy_published_until_the_new_one_is_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vectors = _vectors(300)
    reader, writer = _loaded_pair(tmp_path / "m.db", vectors, 9)
    mirror = next(iter(reader._search._mirrors.values()))
    old = mirror._view
    seen = []  # what a search running beside the reload would read
    allocate = sqlite_mirror._allocate

    def spy(*args):  # type: ignore[no-untyped-def]
        seen.append(mirror._view)
        return allocate(*args)

    monkeypatch.setattr(sqlite_mirror, "_allocate", spy)
    _add(writer, _vectors(5, seed=98), 800)
    writer._pool._open().execute("DELETE FROM vector_log")  # the reader never saw those 5
    _add(writer, _vectors(1, seed=99), 900)  # a gap in the log: the next search reloads
    assert _ids(reader, vectors[9])[0] == _memory(9).id
    assert seen == [old] and mirror._view is not old and mirror._view.n == 306
    reader.close()
    writer.close()


def test_mostly_dead_slots_are_compacted_by_a_reload(tmp_path: Path) -> None:
    vectors = _vectors(2100)
    reader, writer = _loaded_pair(tmp_path / "m.db", vectors, 2000)
    for i in range(1100):  # more dead slots than live ones, and over 1,024
        writer.delete(_memory(i).id, None, None)
    assert _ids(reader, vectors[2000])[0] == _memory(2000).id
    mirror = next(iter(reader._search._mirrors.values()))
    assert mirror._view is not None and mirror._view.n == len(mirror._pos) == 1000
    reader.close()
    writer.close()
