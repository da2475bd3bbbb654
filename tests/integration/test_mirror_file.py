"""The kept copy of a large vector mirror: a fresh process starts from it (and the log since)
and ranks exactly as after a load from SQL; any copy it cannot trust is ignored."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from tinycontext.adapters.sqlite import mirror as sqlite_mirror
from tinycontext.adapters.sqlite import mirror_file
from tinycontext.adapters.sqlite.store import SqliteStore

from .test_vector_mirror import _add, _ids, _vectors


@pytest.fixture(autouse=True)
def _small_copies(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mirror_file, "MIN_ROWS", 10)  # a copy for test-sized stores


def _loads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts loads from SQL (the slow path a copy is there to spare)."""
    calls: list[int] = []
    load = sqlite_mirror.VectorMirror._load

    def counted(self: sqlite_mirror.VectorMirror, conn: object) -> None:
        calls.append(1)
        load(self, conn)

    monkeypatch.setattr(sqlite_mirror.VectorMirror, "_load", counted)
    return calls


def _copy_of(path: Path) -> Path:
    return mirror_file.path_for(path, 1)


def _fresh_ids(path: Path, queries: np.ndarray) -> list[list[str]]:
    store = SqliteStore(path)
    try:
        return [_ids(store, q, 50) for q in queries]
    finally:
        store._search._mirrors.clear()  # no copy written by this reader
        store.close()


def _by_sql(path: Path, queries: np.ndarray, folder: Path) -> list[list[str]]:
    """The same store's answers after a load from SQL (a copy without the kept file)."""
    other = folder / "sql-only.db"
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{path}{suffix}").exists():
            shutil.copyfile(f"{path}{suffix}", f"{other}{suffix}")
    return _fresh_ids(other, queries)


def test_a_fresh_store_starts_from_the_copy_and_ranks_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "m.db"
    vectors, queries = _vectors(600), _vectors(12, seed=5)
    store = SqliteStore(path)
    _add(store, vectors, 0)
    _ids(store, queries[0])  # loads the mirror
    store.close()  # keeps the copy
    copy = _copy_of(path)
    assert copy.is_file() and (copy.stat().st_mode & 0o777) == 0o600
    loads = _loads(monkeypatch)
    from_copy = _fresh_ids(path, queries)
    assert loads == []  # started from the copy
    assert from_copy == _by_sql(path, queries, tmp_path) and loads == [1]


def test_changes_after_the_copy_are_applied_from_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "m.db"
    vectors, queries = _vectors(900), _vectors(12, seed=6)
    store = SqliteStore(path)
    _add(store, vectors[:600], 0)
    _ids(store, queries[0])
    store.close()
    writer = SqliteStore(path)  # another process writes after the copy was kept
    _add(writer, vectors[600:], 600)
    writer.delete(f"{3:08x}-0000-4000-8000-000000000000", None, None)
    writer._search._mirrors.clear()
    writer.close()
    loads = _loads(monkeypatch)
    from_copy = _fresh_ids(path, np.concatenate([queries, vectors[[3, 700]]]))
    assert loads == []
    assert from_copy == _by_sql(path, np.concatenate([queries, vectors[[3, 700]]]), tmp_path)
    assert from_copy[-1][0] == f"{700:08x}-0000-4000-8000-000000000000"
    assert f"{3:08x}-0000-4000-8000-000000000000" not in from_copy[-2]


def test_a_copy_of_another_store_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other, path = tmp_path / "other.db", tmp_path / "m.db"
    store = SqliteStore(other)
    _add(store, _vectors(500, seed=8), 0)
    _ids(store, _vectors(1, seed=8)[0])
    store.close()
    store = SqliteStore(path)
    _add(store, _vectors(400, seed=9), 0)
    store._search._mirrors.clear()
    store.close()
    shutil.copyfile(_copy_of(other), _copy_of(path))  # e.g. a store file replaced by another
    queries = _vectors(6, seed=10)
    loads = _loads(monkeypatch)
    found = _fresh_ids(path, queries)
    assert loads == [1]  # counts disagreed: loaded from SQL instead
    assert found == _by_sql(path, queries, tmp_path)


def test_a_damaged_copy_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "m.db"
    store = SqliteStore(path)
    _add(store, _vectors(300), 0)
    _ids(store, _vectors(1)[0])
    store.close()
    copy = _copy_of(path)
    copy.write_bytes(copy.read_bytes()[: copy.stat().st_size // 2])
    loads = _loads(monkeypatch)
    assert _fresh_ids(path, _vectors(3, seed=4)) == _by_sql(path, _vectors(3, seed=4), tmp_path)
    assert loads == [1, 1]


def test_an_unwritable_folder_only_means_no_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mirror_file, "MIN_ROWS", 10)  # large enough to keep a copy
    path = tmp_path / "m.db"
    nowhere = tmp_path / "missing-folder" / "copy"  # as for a read-only folder: open fails
    asked: list[Path] = []

    def path_for(store: object, model_id: object) -> Path:
        asked.append(nowhere)
        return nowhere

    monkeypatch.setattr(mirror_file, "path_for", path_for)
    store = SqliteStore(path)
    _add(store, _vectors(200), 0)
    _ids(store, _vectors(1)[0])
    store.close()  # no error: the next process loads from SQL
    assert asked  # a copy was attempted
    assert not nowhere.parent.exists() and not list(tmp_path.glob("*.tmp"))


def test_small_mirrors_keep_no_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mirror_file, "MIN_ROWS", 1000)
    path = tmp_path / "m.db"
    store = SqliteStore(path)
    _add(store, _vectors(300), 0)
    _ids(store, _vectors(1)[0])
    store.close()
    assert not _copy_of(path).exists()
