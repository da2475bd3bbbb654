"""The keyword index's tsvector/tsquery literals against a real PostgreSQL: odd input never
breaks a write or a search, and matching follows the SQLite store's tokens."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.contract.store_support import listing, mem, mid, new
from tests.pg_fixture import temporary_database
from tinycontext.adapters.postgres.store import PostgresStore
from tinycontext.adapters.postgres.text import (
    MAX_POSITION,
    MAX_TOKEN_CHARS,
    document_tokens,
    tenant_tag,
    tsvector_literal,
)
from tinycontext.domain.text import keyword_groups
from tinycontext.ports.store import Scope

EPI = Scope("episodic")


@pytest.fixture
def store(request: pytest.FixtureRequest) -> Iterator[PostgresStore]:
    with temporary_database(request) as url:
        pg = PostgresStore(url)
        yield pg
        pg.close()


def found(store: PostgresStore, query: str) -> list[str]:
    return [h.memory.id for h in store.keyword_search(keyword_groups(query), EPI, 10)]


def test_tokens_match_the_sqlite_index() -> None:
    assert document_tokens("Fix build.gradle for E4711 in São Paulo — 3.14 ✅ 东京") == [
        "fix", "build", "gradle", "for", "e4711", "in", "sao", "paulo", "3", "14",
        "emoji2705", "东", "京",
    ]
    assert tenant_tag("") != tenant_tag("a") and tenant_tag("a").endswith(":")
    assert tsvector_literal("it's it's", "t:") == "'t:it':1,3 't:s':2,4"


def test_quotes_backslashes_and_operators_are_plain_text(store: PostgresStore) -> None:
    text = "O'Brien said \\\\server\\share & !(a | b) <-> c:* 'quoted' \"double\""
    store.add([new(mem(1, text))])
    for query in ("O'Brien", "server", "share", "a | b", "c:*", "quoted", "!(", "<->"):
        assert found(store, query) in ([mid(1)], []), query
    assert found(store, "O'Brien") == [mid(1)] and found(store, "quoted") == [mid(1)]
    assert store.browse(listing(search="o'bri")).total_count == 1


def test_very_long_tokens_and_very_long_memories(store: PostgresStore) -> None:
    blob = "x" * 5000
    many = " ".join(f"w{i % 50}" for i in range(MAX_POSITION + 500)) + " needle"
    repeated = " ".join(["again"] * 1000)
    store.add([new(mem(1, f"hash {blob} end")), new(mem(2, many)), new(mem(3, repeated))])
    assert found(store, blob) == [mid(1)]  # matched on its first MAX_TOKEN_CHARS characters
    assert found(store, "x" * MAX_TOKEN_CHARS) == [mid(1)]
    assert found(store, "w7") == [mid(2)] and found(store, "again") == [mid(3)]


def test_every_script_round_trips(store: PostgresStore) -> None:
    texts = ["Ünïcödé façade naïve", "Привет мир", "مرحبا بالعالم", "नमस्ते दुनिया",
             "안녕하세요 세계", "🚀🔥 launch", "ℌ𝔢𝔩𝔩𝔬 ﬁne"]
    store.add([new(mem(i, t)) for i, t in enumerate(texts, start=1)])
    assert found(store, "facade naive") == [mid(1)]
    assert found(store, "мир") == [mid(2)]
    assert found(store, "بالعالم") == [mid(3)]
    assert found(store, "세계") == [mid(5)]
    assert found(store, "🔥") == [mid(6)]
    assert found(store, "hello fine") == [mid(7)]  # NFKC folds the styled letters
    assert [m.content for m in store.find(mid(4), False)] == [texts[3]]
