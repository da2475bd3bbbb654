"""The application's management and transfer use cases: what adapters ask the service for
instead of reaching its store (issue 14)."""

from __future__ import annotations

import io
import itertools
import json
from dataclasses import replace

import pytest

from tinycontext.adapters.mcp.frame import PROMPT_FRAMING
from tinycontext.adapters.web.queries import overview as web_overview
from tinycontext.app.management import overview_view
from tinycontext.app.service import MemoryService
from tinycontext.app.transfer import export_jsonl
from tinycontext.config.engine import TinyContextConfig
from tinycontext.domain.errors import SessionNotFoundError
from tinycontext.domain.listing import build_list_query
from tinycontext.testing import FixedClock, HashEmbedder, InMemoryStore, WordTokenizer


def _service() -> MemoryService:
    counter = itertools.count(1)
    return MemoryService(
        InMemoryStore(), HashEmbedder(), WordTokenizer(), FixedClock(), TinyContextConfig(),
        background=False, new_id=lambda: f"{next(counter):08x}-0000-4000-8000-000000000000",
        recall_framing=PROMPT_FRAMING,  # as the container builds it
    )


def _fill(service: MemoryService) -> None:
    service.save([{"content": "Billing runs on PostgreSQL."},
                  {"content": "Deploys happen on Tuesdays."},
                  {"content": "The staging port is 5433."}], session_id="work")
    service.save([{"content": "Call the user Ada.", "kind": "profile"}])
    service.recall("which database does billing use", max_tokens=10)
    service.update("000000010000", "Billing runs on CockroachDB.")


def test_overview_counts_live_memories_and_the_never_recalled() -> None:
    service = _service()
    _fill(service)
    facts = service.overview()
    assert facts.by_kind.to_dict() == {"episodic": 3, "profile": 1} and facts.total == 4
    # The update's new version and the two never recalled; the recalled billing fact is
    # replaced, so it no longer counts.
    assert facts.never_recalled == 3
    assert {m.ref for m in facts.never_recalled_examples} == {
        "000000020000", "000000030000", "000000050000"}
    assert facts.oldest == facts.newest == facts.current_time == "2026-07-31T10:15:00Z"


def test_browse_reads_replaced_versions_and_checks_the_session() -> None:
    service = _service()
    _fill(service)
    query = build_list_query("work", None, None, None, 10, 0, None, None)
    history = service.browse(replace(query, superseded=True))
    assert [hit.memory.ref for hit in history.memories] == ["000000010000"]
    assert service.browse(query).total_count == 3
    with pytest.raises(SessionNotFoundError):
        service.browse(replace(query, session_id="nowhere"))


def test_export_records_and_import_go_through_the_service() -> None:
    source = _service()
    _fill(source)
    assert len(list(source.export_records())) == 5  # the replaced version too
    assert [m.session_id for m, _ in source.export_records("work")].count("work") == 4
    out = io.StringIO()
    export_jsonl(source.store, out)
    target = _service()
    report = target.import_jsonl(out.getvalue().splitlines())
    assert (report.imported, report.already_present) == (5, 0)
    assert target.detail("000000010000").to_dict()["superseded_by"] == "000000050000"
    assert target.list_page().to_dict() == {**source.list_page().to_dict()}


def test_never_recalled_counts_episodic_memories_only_even_when_a_profile_was_recalled() -> None:
    # The documented rule (docs/guides/hosted.md, the Overview view): live episodic memories
    # no recall returned. A profile memory can carry a recall count (an import keeps it);
    # counting "every never-recalled memory less every profile" then came out one short.
    source = _service()
    _fill(source)
    lines = [json.loads(line) for line in _export(source)]
    for record in lines:
        if record["kind"] == "profile":
            record["recall_count"] = 2
    target = _service()
    target.import_jsonl([json.dumps(record) for record in lines])
    facts = target.overview()
    assert facts.by_kind.to_dict() == {"episodic": 3, "profile": 1}
    assert facts.never_recalled == 3 == len(facts.never_recalled_examples)
    assert facts.most_recalled_examples == ()  # the recalled profile is not an example
    assert web_overview(target, operator=False)["never_count"] == 3
    assert overview_view(target)["never_recalled"]["count"] == 3


def test_the_web_overview_and_the_management_view_read_the_same_overview() -> None:
    service = _service()
    _fill(service)
    view = overview_view(service)
    page = web_overview(service, operator=False)
    assert page["by_kind"] == view["counts"]["by_kind"] and page["total"] == 4
    assert page["never_count"] == view["never_recalled"]["count"] == 3
    assert [m.id for m in page["never_recalled"]] == [
        m["id"] for m in view["never_recalled"]["examples"]]


def _export(service: MemoryService) -> list[str]:
    out = io.StringIO()
    export_jsonl(service.store, out)
    return out.getvalue().splitlines()
