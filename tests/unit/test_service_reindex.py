"""Background re-embedding after a model change, driven synchronously with the fakes."""

from __future__ import annotations

from tests.fakes import HashEmbedder
from tests.unit.support import save
from tinycontext.ports.store import Scope


def test_model_change_reembeds_with_progress_notice(make, clock, store):
    old = make(embedder=HashEmbedder(key="a"), save_context_minutes=0,
                recall_late_interaction=False)
    save(old, "The project stores state in SQLite.", "Lunch is at noon.", "Cats sleep a lot.")
    assert store.count_pending_embeddings("a") == 0

    new_embedder = HashEmbedder(dimensions=32, key="b")
    svc = make(embedder=new_embedder, save_context_minutes=0,
                recall_late_interaction=False)
    assert store.count_pending_embeddings("b") == 3

    pending = svc.recall("SQLite state").to_dict()
    assert "Re-embedding" in pending["notice"] and "0 of 3" in pending["notice"]
    # Old vectors are never compared with new ones: only BM25 finds anything meanwhile.
    [hit] = pending["memories"]
    assert hit["content"] == "The project stores state in SQLite."
    assert hit["scores"]["dense"] is None and hit["scores"]["bm25"] is not None
    assert "notice" in svc.recall().to_dict()

    assert svc.reindexer.run_until_done() == 3
    assert store.count_pending_embeddings("b") == 0
    done = svc.recall("SQLite state").to_dict()
    assert "notice" not in done
    assert len(done["memories"]) == 3  # dense search sees every memory again
    top = done["memories"][0]
    assert top["content"] == "The project stores state in SQLite."
    expected = new_embedder.embed(["The project stores state in SQLite."])[0]
    [stored] = store.nearest(expected, "b", Scope("episodic"), 1)
    assert stored.memory.content == top["content"] and abs(stored.score - 1.0) < 1e-6
    assert top["scores"]["dense"] is not None
    assert "notice" not in svc.list_page().to_dict()
    assert "notice" not in svc.save([{"content": "Another new fact."}]).to_dict()


def test_save_during_reembedding_carries_the_notice(make, store):
    save(make(embedder=HashEmbedder(key="a"), save_context_minutes=0,
                recall_late_interaction=False), "An old fact.")
    svc = make(embedder=HashEmbedder(key="b"), save_context_minutes=0,
                recall_late_interaction=False)
    result = svc.save([{"content": "A fresh fact."}]).to_dict()
    assert "Re-embedding" in result["notice"]
    assert store.count_pending_embeddings("b") == 1  # the new one is embedded with "b"
    svc.reindexer.run_until_done()
    assert "notice" not in svc.save([{"content": "Yet another fact."}]).to_dict()


def test_no_notice_when_nothing_is_pending(make):
    svc = make()
    save(svc, "A fact.")
    assert "notice" not in svc.recall("fact").to_dict()
    assert svc.reindexer.run_until_done() == 0


def test_reembedding_covers_superseded_versions(make, store):
    old = make(embedder=HashEmbedder(key="a"), save_context_minutes=0,
                recall_late_interaction=False)
    [m] = save(old, "The deadline is Friday.")
    old.update(m["id"], "The deadline is Monday.")
    svc = make(embedder=HashEmbedder(key="b"), save_context_minutes=0,
                recall_late_interaction=False)
    assert svc.reindexer.run_until_done() == 2
    # Restoring the old version after the change gives it a current vector at once.
    live = svc.list_page().to_dict()["memories"][0]["id"]
    svc.delete(live)
    assert [r["content"] for r in svc.recall("Friday").to_dict()["memories"]] == [
        "The deadline is Friday."]
    assert svc.recall("Friday").to_dict()["memories"][0]["scores"]["dense"] is not None


def test_list_as_first_call_shows_pending_reembedding(make):
    save(make(embedder=HashEmbedder(key="a"), save_context_minutes=0,
                recall_late_interaction=False), "An old fact.")
    svc = make(embedder=HashEmbedder(key="b"), save_context_minutes=0,
                recall_late_interaction=False)
    page = svc.list_page().to_dict()
    assert "Re-embedding" in page.get("notice", "")


def test_the_eta_is_timed_from_the_end_of_the_first_batch(make, store, monkeypatch):
    # The first batch also loads the model; timing from the start overstated the ETA.
    from tinycontext.app import reindex

    old = make(embedder=HashEmbedder(key="a"), save_context_minutes=0,
                recall_late_interaction=False)
    save(old, *[f"Fact number {i} about topic {i}." for i in range(40)])
    svc = make(embedder=HashEmbedder(key="b"), save_context_minutes=0,
               recall_late_interaction=False, embedding_batch_size=10)
    now = [100.0]
    monkeypatch.setattr(reindex.time, "monotonic", lambda: now[0])
    svc.reindexer.ensure_started()
    assert "estimating the time left" in svc.reindexer.notice()
    now[0] += 30.0  # a slow first batch (model load)
    svc.reindexer.step()
    assert "10 of 40 done, estimating the time left" in svc.reindexer.notice()
    now[0] += 1.0  # then 10 per second
    svc.reindexer.step()
    assert "20 of 40 done, about 3 s left" in svc.reindexer.notice()


def test_an_update_gives_the_store_upkeep_a_chance(make, monkeypatch):
    """An update leaves work for the store's upkeep (PostgreSQL moves the replaced version
    into its index there), so it starts the upkeep as a save does."""
    svc = make()
    [saved] = svc.save([{"content": "The office is in Berlin."}]).saved
    chances: list[str] = []
    monkeypatch.setattr(svc.reindexer, "after_write", lambda: chances.append("kick"))
    svc.update(saved.id, "The office is in Paris.")
    assert chances == ["kick"]
