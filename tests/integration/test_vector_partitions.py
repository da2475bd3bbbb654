"""The IVF partitioning of the SQLite vector index: clustering, re-tagging, bounded probes."""

from __future__ import annotations

from array import array
from pathlib import Path

import pytest

from tests.fakes import HashEmbedder
from tinycontext.adapters.sqlite import dense as sqlite_dense
from tinycontext.adapters.sqlite import ivf as sqlite_ivf
from tinycontext.adapters.sqlite.store import SqliteStore
from tinycontext.domain.memory import Memory
from tinycontext.ports.store import NewMemory, Scope

WORDS = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi "
         "rho sigma tau upsilon phi chi psi omega red green blue amber violet teal").split()


def _texts(start: int, count: int) -> list[str]:
    return [
        " ".join(WORDS[(i * k + k * k) % len(WORDS)] for k in range(1, 7)) + f" item{i}"
        for i in range(start, start + count)
    ]


def _add(
    store: SqliteStore, embedder: HashEmbedder, texts: list[str], offset: int,
    session: str | None = None,
) -> None:
    items = []
    for i, (text, vector) in enumerate(zip(texts, embedder.embed(texts), strict=True)):
        memory = Memory(
            id=f"{offset + i:08x}-0000-4000-8000-000000000000", content=text, kind="episodic",
            session_id=session, created_at="2026-01-01T00:00:00Z", content_tokens=7,
            embedding_model=embedder.model_key,
        )
        items.append(NewMemory(memory, vector))
    store.add(items)


def _exact(store: SqliteStore, embedder: HashEmbedder, query: bytes, k: int) -> list[str]:
    conn = store._pool._open()
    rows = conn.execute("SELECT id, embedding FROM memories").fetchall()
    q = array("f", query)
    scored = sorted(
        rows, key=lambda r: -sum(a * b for a, b in zip(q, array("f", r[1]), strict=True))
    )
    return [r[0] for r in scored[:k]]


@pytest.fixture
def small_partitions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlite_ivf, "TRAIN_AT", 200)
    monkeypatch.setattr(sqlite_ivf, "PROBE_ROWS", 60)
    monkeypatch.setattr(sqlite_ivf, "MIN_CELLS", 8)
    monkeypatch.setattr(sqlite_ivf, "COUNT_TTL_SECONDS", 0.0)
    # The IVF path serves stores too large for the in-memory mirror; make every store so.
    monkeypatch.setattr(sqlite_dense, "MAX_MIRROR_BYTES", 0)


def test_clustering_retagging_and_growth(tmp_path: Path, small_partitions: None) -> None:
    store, embedder = SqliteStore(tmp_path / "ivf.db"), HashEmbedder()
    _add(store, embedder, _texts(0, 250), 0)
    conn = store._pool._open()
    while store.maintain_index(embedder.model_key):
        pass
    assert conn.execute("SELECT max(version) FROM vector_versions").fetchone()[0] == 1
    assert conn.execute("SELECT count(*) FROM vector_index WHERE cell_key = 0").fetchone()[0] == 0

    _add(store, embedder, _texts(250, 50), 250)  # new rows are tagged on insert
    assert conn.execute("SELECT count(*) FROM vector_index WHERE cell_key = 0").fetchone()[0] == 0

    query = embedder.embed([_texts(17, 1)[0]])[0]
    hits = store.nearest(query, embedder.model_key, Scope("episodic"), 10)
    assert hits[0].memory.content == _texts(17, 1)[0]
    exact = _exact(store, embedder, query, 10)
    overlap = len({h.memory.id for h in hits} & set(exact)) / 10
    assert overlap >= 0.6

    _add(store, embedder, _texts(300, 800), 300)  # grown 4x past the clustering: re-cluster
    assert store.maintain_index(embedder.model_key)
    assert conn.execute("SELECT max(version) FROM vector_versions").fetchone()[0] == 2
    # Rows still tagged by version 1 remain searchable until re-tagged.
    probe = _texts(5, 1)[0]
    found = store.nearest(embedder.embed([probe])[0], embedder.model_key, Scope("episodic"), 3)
    assert found[0].memory.content == probe
    while store.maintain_index(embedder.model_key):
        pass
    floor = 2 << sqlite_ivf.CELL_BITS
    stale = conn.execute("SELECT count(*) FROM vector_index WHERE cell_key < ?", (floor,))
    assert stale.fetchone()[0] == 0
    old = conn.execute("SELECT count(*) FROM vector_centroids WHERE version = 1")
    assert old.fetchone()[0] == 0
    found = store.nearest(embedder.embed([probe])[0], embedder.model_key, Scope("episodic"), 3)
    assert found[0].memory.content == probe
    store.close()


def test_small_scopes_are_scanned_in_full(tmp_path: Path, small_partitions: None) -> None:
    store, embedder = SqliteStore(tmp_path / "ivf.db"), HashEmbedder()
    _add(store, embedder, _texts(0, 400), 0)
    _add(store, embedder, _texts(400, 90), 400, session="small")
    while store.maintain_index(embedder.model_key):
        pass
    # A session below twice the probe size is ranked in full: no row is missed.
    query = embedder.embed(["omega violet"])[0]
    hits = store.nearest(query, embedder.model_key, Scope("episodic", "small"), 500)
    assert len(hits) == 90
    # The whole store is probed by cells: a bounded share of the rows.
    probed = store.nearest(query, embedder.model_key, Scope("episodic"), 500)
    assert 60 <= len(probed) < 490
    store.close()


def test_kmeans_gives_unit_centroids() -> None:
    import numpy as np

    rng = np.random.default_rng(1)
    sample = rng.standard_normal((500, 16)).astype(np.float32)
    sample /= np.linalg.norm(sample, axis=1, keepdims=True)
    centroids = sqlite_ivf.spherical_kmeans(sample, 8)
    assert centroids.shape == (8, 16)
    assert np.allclose(np.linalg.norm(centroids, axis=1), 1.0, atol=1e-5)
    assert sqlite_ivf.cell_count(4096) == 256 and sqlite_ivf.cell_count(10**6) == 4096


def test_rerank_grows_with_the_store_within_bounds() -> None:
    from tinycontext.adapters.sqlite.dense_sql import MIN_RERANK, rerank_count

    assert rerank_count(200, 0) == rerank_count(200, 20_000) == 400
    assert rerank_count(200, 80_000) == 800  # 2 x sqrt(4)
    assert rerank_count(200, 10_000_000) == 1200  # capped at 6x
    assert rerank_count(5, 100_000) == MIN_RERANK  # dedup's few neighbours
    sizes = [0, 20_000, 50_000, 100_000, 200_000, 1_000_000]
    counts = [rerank_count(200, n) for n in sizes]
    assert counts == sorted(counts)
