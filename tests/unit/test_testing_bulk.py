"""tinycontext.testing.bulk: memories prepared outside the engine (own vectors, dates, version
chains) written through the store port, then read back through the service as saved ones are
(benchmarks build their large stores with it instead of the store's internals)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tinycontext import TinyContextConfig, TinyContextError, build_service
from tinycontext.app.service import MemoryService
from tinycontext.testing import HashEmbedder, InMemoryStore, WordTokenizer
from tinycontext.testing.bulk import bulk_id, bulk_load, bulk_number, prepared

TEXTS = ["Staging deploys run at noon.", "The cafeteria serves soup on Fridays.",
         "Staging deploys now run at two.", "Billing reviews happen on Mondays."]


def _rows(service: MemoryService) -> list:  # type: ignore[type-arg]
    """Four memories, the first an older version of the third (replaced at its time)."""
    vectors = service.embedder.embed([service.config.dense_document_prefix + t for t in TEXTS])
    at = ["2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z", "2024-01-03T00:00:00Z",
          "2024-01-04T00:00:00Z"]
    ids = [bulk_id(n) for n in range(4)]
    links: list[dict[str, str]] = [
        {"superseded_by": ids[2], "superseded_at": at[2]}, {}, {"supersedes": ids[0]}, {}]
    return [prepared(ids[n], TEXTS[n], created_at=at[n], vector=vectors[n],
                     model_key=service.model_key,
                     content_tokens=service.tokenizer.count(TEXTS[n]), session_id="ops",
                     tags=("deploys",) if n in (0, 2) else (), **links[n]) for n in range(4)]


@pytest.fixture(params=["sqlite", "memory"])
def service(request: pytest.FixtureRequest, tmp_path: Path) -> MemoryService:
    config = TinyContextConfig(memory_db_path=str(tmp_path / "m.db"))
    store = InMemoryStore() if request.param == "memory" else None
    made = build_service(config, store=store, embedder=HashEmbedder(),
                         tokenizer=WordTokenizer(), background=False)
    request.addfinalizer(made.close)
    return made


def test_a_bulk_load_reads_back_as_saved_memories(service: MemoryService) -> None:
    rows = _rows(service)
    lines: list[str] = []
    loaded = bulk_load(service.store, [rows[:2], rows[2:]], service.model_key, lines.append)
    assert loaded.rows == 4 and lines[:2] == [lines[0], lines[1]] and "stored 4" in lines[1]
    live = service.list_page(session_id="ops", limit=10).to_dict()
    assert {m["content"] for m in live["memories"]} == set(TEXTS) - {TEXTS[0]}
    found = service.recall("when do staging deploys run", "ops", tags=["deploys"]).to_dict()
    assert [m["content"] for m in found["memories"]] == [TEXTS[2]]
    then = service.recall("staging deploys", "ops", as_of="2024-01-02T12:00:00Z").to_dict()
    assert TEXTS[0] in [m["content"] for m in then["memories"]]
    assert TEXTS[2] not in [m["content"] for m in then["memories"]]
    newer = service.detail(bulk_id(0)).to_dict()["superseded_by"]  # a ref of its own
    assert service.detail(newer).to_dict()["content"] == TEXTS[2]


def test_the_index_upkeep_runs_until_the_store_is_done(service: MemoryService) -> None:
    asked: list[str] = []
    store = service.store

    class Counting:
        def add(self, items: list) -> None:  # type: ignore[type-arg]
            store.add(items)

        def maintain_index(self, model_key: str) -> bool:
            asked.append(model_key)
            return len(asked) < 3

    loaded = bulk_load(Counting(), [_rows(service)], service.model_key)
    assert asked == [service.model_key] * 3 and loaded.upkeep_steps == 2
    assert bulk_load(Counting(), [], service.model_key, upkeep=False).upkeep_steps == 0
    assert len(asked) == 3


def test_ids_are_uuid4_shaped_and_give_their_number_back() -> None:
    assert bulk_id(0) == "00000000-0001-4000-8000-000000000001"
    assert len({bulk_id(n)[:13] for n in range(1000)}) == 1000  # refs differ
    assert [bulk_number(bulk_id(n)) for n in (0, 7, 10**9)] == [0, 7, 10**9]
    with pytest.raises(TinyContextError):
        bulk_id(-1)


@pytest.mark.parametrize("bad", [
    {"kind": "fact"}, {"vector": b""}, {"vector": b"\0\0\0"},
    {"superseded_by": bulk_id(2)}, {"superseded_at": "2024-01-01T00:00:00Z"},
])
def test_a_malformed_row_is_refused_before_anything_is_written(bad: dict[str, object]) -> None:
    fields: dict[str, object] = {"created_at": "2024-01-01T00:00:00Z", "vector": b"\0" * 16,
                                 "model_key": "hash", "content_tokens": 1} | bad
    with pytest.raises(TinyContextError) as raised:
        prepared(bulk_id(0), "text", **fields)  # type: ignore[arg-type]
    assert raised.value.code == "invalid_request"
