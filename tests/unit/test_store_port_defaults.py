"""Store port defaults: a store written before keyword_ideal and nearest_many still works."""

from __future__ import annotations

from tinycontext import TinyContextConfig, build_service
from tinycontext.ports.store import Scope, Store
from tinycontext.testing import FixedClock, HashEmbedder, InMemoryStore, WordTokenizer


class OlderStore(InMemoryStore):
    """Keeps the port's defaults for the two methods added later."""

    keyword_ideal = Store.keyword_ideal
    keyword_rarity = Store.keyword_rarity
    nearest_many = Store.nearest_many
    session_counts = Store.session_counts


def test_a_store_without_the_newer_methods_saves_and_recalls() -> None:
    store, embedder = OlderStore(), HashEmbedder()
    service = build_service(TinyContextConfig(recall_feedback_weight=0.5), store=store,
                            embedder=embedder, tokenizer=WordTokenizer(), clock=FixedClock())
    service.save([{"content": "Staging deploys run at noon."},
                  {"content": "Billing uses PostgreSQL."}], session_id="ops")
    assert store.keyword_ideal([["staging"]]) == 0.0
    assert store.keyword_rarity(["staging"]) == {}  # so recall adds no feedback query
    assert store.session_counts(10) == []  # the web UI then shows no sessions
    [top, *_] = service.recall("staging deploys", session_id="ops").to_dict()["memories"]
    assert top["content"] == "Staging deploys run at noon."
    vectors = embedder.embed(["staging", "billing"])
    scope = Scope("episodic", "ops")
    assert store.nearest_many(vectors, embedder.model_key, scope, 2) == [
        store.nearest(v, embedder.model_key, scope, 2) for v in vectors
    ]
