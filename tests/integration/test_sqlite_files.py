"""The SQLite store on real files: permissions, schema upgrade, sqlite-vec as the ranking path."""

from __future__ import annotations

import os
import sqlite3 as _unused  # noqa: F401  (pytest imports it anyway; the store must cope)
import stat
from array import array
from pathlib import Path

import pytest

from tests.fakes import FixedClock, HashEmbedder, WordTokenizer
from tinycontext.adapters.sqlite import driver as sqlite_driver
from tinycontext.adapters.sqlite.schema import MIGRATIONS, SCHEMA_VERSION
from tinycontext.adapters.sqlite.store import SqliteStore
from tinycontext.config.engine import TinyContextConfig
from tinycontext.domain.text import recall_terms
from tinycontext.entry.container import build_service
from tinycontext.ports.store import Scope

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_database_created_lazily_and_owner_only(sqlite_service, db_path: Path) -> None:
    assert not db_path.exists() and not db_path.parent.exists()
    sqlite_service.save([{"content": "The deploy key lives in the vault."}])
    assert _mode(db_path.parent) == 0o700
    for suffix in ("", "-wal", "-shm"):
        companion = Path(f"{db_path}{suffix}")
        assert companion.exists(), suffix
        assert _mode(companion) == 0o600, suffix


def test_existing_readable_store_is_tightened_but_chosen_folder_kept(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)
    path = folder / "m.db"
    store = SqliteStore(path)
    store.find("0" * 12, True)
    store.close()
    os.chmod(path, 0o644)
    store = SqliteStore(path)
    store.find("0" * 12, True)
    store.close()
    assert _mode(path) == 0o600
    assert _mode(folder) == 0o755


def _create_v1_database(path: Path) -> None:
    """A store as schema version 1 wrote it: text and keyword index, no embeddings at all."""
    conn = sqlite_driver.sqlite_module().connect(str(path))
    for statement in MIGRATIONS[0]:
        conn.execute(statement)
    rows = [
        ("11111111-1111-4111-8111-111111111111", "The staging server runs Debian 12.", "ops"),
        ("22222222-2222-4222-8222-222222222222", "Backups rotate every Sunday night.", "ops"),
    ]
    for seq, (mid, content, session) in enumerate(rows, start=1):
        conn.execute(
            "INSERT INTO memories(seq, id, ref, content, kind, session_id, created_at,"
            " content_tokens) VALUES (?,?,?,?,?,?,?,?)",
            (seq, mid, mid.replace("-", "")[:12], content, "episodic", session,
             f"2026-01-0{seq}T08:00:00Z", len(content.split())),
        )
        conn.execute("INSERT INTO memory_fts(rowid, terms) VALUES (?, ?)", (seq, content))
        conn.execute("INSERT OR IGNORE INTO sessions VALUES (?)", (session,))
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()


def test_older_schema_is_upgraded_in_place_and_backfilled(db_path: Path) -> None:
    db_path.parent.mkdir()
    _create_v1_database(db_path)
    service = build_service(
        TinyContextConfig(memory_db_path=str(db_path)), store=SqliteStore(db_path),
        embedder=HashEmbedder(), tokenizer=WordTokenizer(), clock=FixedClock(), background=False,
    )
    first = service.recall("backups sunday", session_id="ops").to_dict()
    assert [m["ref"] for m in first["memories"]][:1] == ["222222222222"]
    assert "Re-embedding" in first["notice"]
    assert service.reindexer.run_until_done() == 2
    after = service.recall("backups rotate every sunday night", session_id="ops").to_dict()
    assert "notice" not in after
    top = after["memories"][0]
    assert top["ref"] == "222222222222" and top["scores"]["dense"] is not None
    conn = sqlite_driver.sqlite_module().connect(str(db_path))
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    conn.close()
    service.close()


def test_reindex_survives_restart(db_path: Path) -> None:
    def service_with(key: str):  # type: ignore[no-untyped-def]
        return build_service(
            TinyContextConfig(memory_db_path=str(db_path), embedding_batch_size=4),
            store=SqliteStore(db_path), embedder=HashEmbedder(key=key),
            tokenizer=WordTokenizer(), clock=FixedClock(), background=False,
        )

    old = service_with("model-a")
    old.save([{"content": f"fact number {i} about topic {i * 7}"} for i in range(10)])
    old.close()
    first = service_with("model-b")
    first.reindexer.ensure_started()
    assert first.reindexer.step() == 4  # one batch, then the process "dies"
    first.close()
    second = service_with("model-b")
    second.reindexer.ensure_started()
    assert second.reindexer.total == 6
    assert second.reindexer.run_until_done() == 6
    assert second.store.count_pending_embeddings(second.model_key) == 0
    second.close()


def test_background_reindex_does_not_block_recall(db_path: Path) -> None:
    import threading

    class SlowEmbedder(HashEmbedder):
        gate = threading.Event()

        def embed(self, texts):  # type: ignore[no-untyped-def]
            if len(texts) > 1:  # a re-embedding batch waits; single queries do not
                self.gate.wait(10)
            return super().embed(texts)

        def embed_with_tokens(self, texts, drop_stopwords):  # type: ignore[no-untyped-def]
            if len(texts) > 1:
                self.gate.wait(10)
            return super().embed_with_tokens(texts, drop_stopwords)

    seed = build_service(
        TinyContextConfig(memory_db_path=str(db_path)), store=SqliteStore(db_path),
        embedder=HashEmbedder(key="old"), tokenizer=WordTokenizer(), clock=FixedClock(),
        background=False,
    )
    seed.save([{"content": f"note {i} on the roadmap"} for i in range(5)])
    seed.close()
    slow = SlowEmbedder(key="new")
    service = build_service(
        TinyContextConfig(memory_db_path=str(db_path)), store=SqliteStore(db_path),
        embedder=slow, tokenizer=WordTokenizer(), clock=FixedClock(),
    )
    result = service.recall("roadmap note").to_dict()  # answers while the worker is stuck
    assert result["memories"] and "0 of 5 done" in result["notice"]
    saved = service.save([{"content": "A fresh fact during re-embedding."}]).to_dict()
    assert saved["saved"]
    slow.gate.set()
    service.reindexer.stop()
    service.close()


def test_sqlite_vec_is_the_ranking_path(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    store = SqliteStore(tmp_path / "v.db")
    embedder = HashEmbedder()
    service = build_service(
        TinyContextConfig(memory_db_path=str(tmp_path / "v.db")), store=store,
        embedder=embedder, tokenizer=WordTokenizer(), clock=FixedClock(), background=False,
    )
    texts = [f"alpha beta {w} gamma {i}" for i, w in enumerate(["red", "green", "blue", "cyan"])]
    service.save([{"content": t} for t in texts])
    facts = store.diagnostics()
    assert facts["sqlite_vec_version"].startswith("v") and facts["fts5"]
    query = embedder.embed(["alpha green gamma"])[0]
    hits = store.nearest(query, embedder.model_key, Scope("episodic"), 10)
    qv = array("f", query)
    for hit in hits:  # similarities computed by sqlite-vec in C equal the exact cosine
        vec = array("f", embedder.embed([hit.memory.content])[0])
        exact = sum(a * b for a, b in zip(qv, vec, strict=True))
        assert hit.score == pytest.approx(exact, abs=1e-5)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    service.close()

    # With the extension unavailable the store fails loudly; there is no Python fallback.
    monkeypatch.setattr(sqlite_driver, "vector_extension_path", lambda: "/nonexistent/vec0")
    with pytest.raises(sqlite_driver.SqliteUnavailableError):
        SqliteStore(tmp_path / "w.db").find("0" * 12, True)


def test_one_sqlite_build_per_process() -> None:
    first = sqlite_driver.sqlite_module()
    assert sqlite_driver.sqlite_module() is first
    can_load = hasattr(_unused.Connection, "enable_load_extension")
    assert sqlite_driver.driver_name() == ("sqlite3" if can_load else "sqlean")


def test_query_sign_bits_match_sqlite_vec(tmp_path: Path) -> None:
    import numpy as np

    from tinycontext.adapters.sqlite.dense_sql import sign_bits

    store = SqliteStore(tmp_path / "bits.db")
    conn = store._pool._open()
    rng = np.random.default_rng(3)
    for dims in (384, 26):
        vector = rng.standard_normal(dims).astype(np.float32)
        vector[1] = 0.0
        from tinycontext.adapters.sqlite.rows import padded

        expected = conn.execute("SELECT vec_quantize_binary(?)", (padded(vector.tobytes()),))
        assert sign_bits(vector.tobytes()) == bytes(expected.fetchone()[0])
    store.close()


def test_connections_are_bounded_per_store(sqlite_service, db_path: Path) -> None:
    import threading

    from tinycontext.adapters.sqlite.connection import MAX_CONNECTIONS

    sqlite_service.save([{"content": f"fact {i} about item {i}"} for i in range(20)])
    errors: list[Exception] = []

    def work() -> None:
        try:
            for i in range(10):
                sqlite_service.recall(f"item {i}", top_k=3)
                sqlite_service.list_page(limit=5)
        except Exception as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    opened = len(sqlite_service.store._pool._all)
    assert 1 <= opened <= MAX_CONNECTIONS


def test_upgrade_to_v6_fills_stems_and_save_time_context(db_path: Path) -> None:
    from tests.contract.store_support import mem, new

    db_path.parent.mkdir()
    # Related in meaning (the fake's vectors share words), but only the first names pottery;
    # the third is unrelated to the second.
    first = mem(1, "Melanie signed up for a pottery class at the hall.",
                created="2026-01-01T08:00:00Z")
    second = mem(2, "It starts at the hall next Tuesday, Melanie says.",
                 created="2026-01-01T08:10:00Z")
    third = mem(3, "Bob owns two grey cats.", created="2026-01-01T08:20:00Z")
    later = mem(4, "Melanie bought clay for the pottery class at the hall.",
                created="2026-01-03T08:00:00Z")  # related, but two days later
    store = SqliteStore(db_path)
    store.add([new(m) for m in (first, second, third, later)])
    store.close()
    conn = sqlite_driver.sqlite_module().connect(str(db_path))  # back to version 5's layout
    sqlite_driver.load_vector_extension(conn)
    conn.execute("DROP TABLE memory_tokens")
    conn.execute("DROP TABLE memory_labels")  # and what version 8 added
    conn.execute("DROP INDEX memories_replaced_until")
    conn.execute("ALTER TABLE memories DROP COLUMN tags")
    conn.execute("ALTER TABLE memories DROP COLUMN metadata")
    conn.execute("DROP INDEX memories_context")
    conn.execute("ALTER TABLE memories DROP COLUMN context_id")
    conn.execute("CREATE VIRTUAL TABLE old_fts USING fts5(terms, "
                 "tokenize = 'unicode61 remove_diacritics 2')")
    conn.execute("INSERT INTO old_fts(rowid, terms) SELECT rowid, terms FROM memory_fts")
    conn.execute("DROP TABLE memory_fts")
    conn.execute("ALTER TABLE old_fts RENAME TO memory_fts")
    conn.execute("PRAGMA user_version = 5")
    conn.commit()
    conn.close()
    store = SqliteStore(db_path)
    assert store.contexts([m.id for m in (first, second, third, later)]) == {
        second.id: (first.id, first.content)}
    hits = store.keyword_search(recall_terms("pottery classes"), Scope("episodic"), 10)
    assert [h.memory.id for h in hits][:2] == [later.id, first.id] or \
        [h.memory.id for h in hits][:2] == [first.id, later.id]
    assert [h.memory.id for h in hits][2:] == [second.id]  # by stem, then through context
    store.close()
