"""Recall through the service on PostgreSQL with the real default model, beside SQLite.

PostgreSQL's own ranking (`ts_rank_cd`) has no notion of how rare a word is; the store
weights each query word by its BM25 IDF so that an exact rare token (an error code, a name)
still wins over memories that merely repeat the common words of the question.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.pg_fixture import temporary_database
from tinycontext.adapters.postgres.store import PostgresStore
from tinycontext.adapters.postgres.text import any_query, query_groups, tenant_tag
from tinycontext.adapters.sqlite.store import SqliteStore
from tinycontext.app.service import MemoryService
from tinycontext.config.engine import TinyContextConfig
from tinycontext.domain.text import recall_terms
from tinycontext.entry.container import build_service
from tinycontext.ports.store import Scope, Store

pytestmark = pytest.mark.slow

RARE = "Error E4711 means the card issuer timed out; ask the customer to retry later."
QUESTION = "What does error E4711 in the payment service mean?"


def noise(n: int) -> list[str]:
    """Memories full of the question's common words (error, payment, service), no E4711."""
    places = ["checkout", "refund", "invoice", "subscription", "wallet", "payout"]
    return [
        f"The payment service logged error E{1000 + i} during {places[i % 6]}; the payment "
        f"service retried after the error and the payment service recovered on day {i}."
        for i in range(n)
    ]


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "sqlite":
        sqlite = SqliteStore(tmp_path / "m.db")
        yield sqlite
        sqlite.close()
        return
    with temporary_database(request) as url:
        pg = PostgresStore(url)
        yield pg
        pg.close()


@pytest.fixture
def pg_store(request: pytest.FixtureRequest) -> Iterator[PostgresStore]:
    with temporary_database(request) as url:
        pg = PostgresStore(url)
        yield pg
        pg.close()


def stocked(store: Store, embedder) -> MemoryService:  # type: ignore[no-untyped-def]
    built = build_service(TinyContextConfig(memory_db_path="/nonexistent/unused.db"),
                          store=store, embedder=embedder, background=False)
    memories = [{"content": text} for text in noise(300)]
    memories.insert(137, {"content": RARE})
    for start in range(0, len(memories), 64):
        built.save(memories[start:start + 64], session_id="ops")
    return built


@pytest.fixture
def service(store: Store, real_embedder) -> Iterator[MemoryService]:  # type: ignore[no-untyped-def]
    built = stocked(store, real_embedder)
    yield built
    built.close()


def test_keyword_side_puts_the_rare_token_first(service: MemoryService) -> None:
    hits = service.store.keyword_search(recall_terms(QUESTION), Scope("episodic", "ops"), 100)
    assert hits[0].memory.content == RARE
    assert hits[0].score > 2 * hits[1].score  # its IDF outweighs every common word


@pytest.mark.parametrize("query", ["error E4711", "the E4711 error", "What does E4711 mean?"])
def test_fused_recall_finds_the_exact_rare_token(service: MemoryService, query: str) -> None:
    # 300 memories share "error" with the query and are close to it in meaning; the one
    # holding the exact code must still come first.
    result = service.recall(query, "ops", top_k=5).to_dict()
    assert result["memories"][0]["content"] == RARE
    assert result["memories"][0]["scores"]["bm25"] is not None


def test_both_stores_agree_on_a_plain_question(service: MemoryService) -> None:
    result = service.recall("Why did the card issuer time out?", "ops", top_k=3).to_dict()
    assert result["memories"][0]["content"] == RARE


def test_plain_ts_rank_would_bury_the_rare_token(pg_store: PostgresStore, real_embedder) -> None:  # type: ignore[no-untyped-def]
    """Why the store adds IDF: PostgreSQL's ranking alone prefers the repetitive memories."""
    stocked(pg_store, real_embedder).close()
    groups = query_groups(recall_terms(QUESTION))
    match = any_query(groups, tenant_tag(""))
    rows = pg_store._pool.read(
        "SELECT m.content FROM tinycontext.memory_terms t JOIN tinycontext.memories m "
        "ON m.seq = t.seq WHERE t.terms @@ %s::tsquery "
        "ORDER BY ts_rank_cd(t.terms, %s::tsquery, 33) DESC, m.id LIMIT 50",
        (match, match),
    )
    assert len(rows) == 50 and RARE not in [r[0] for r in rows]
    hits = pg_store.keyword_search(recall_terms(QUESTION), Scope("episodic", "ops"), 50)
    assert hits[0].memory.content == RARE
