"""Tags, metadata, time windows and "as of" through the service, over the fake, SQLite and
PostgreSQL stores alike: the errors and edges of the feature."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest

from tests.fakes import FixedClock, HashEmbedder, WordTokenizer
from tinycontext.app.service import MemoryService
from tinycontext.domain.errors import (
    InvalidRequestError,
    MemoryAlreadySupersededError,
    MemoryNotFoundError,
)
from tinycontext.domain.memory import MemoryInput


@pytest.fixture
def svc(store):
    clock = FixedClock(datetime(2026, 3, 1, 9, 0, tzinfo=UTC))
    service = MemoryService(store, HashEmbedder(), WordTokenizer(), clock, background=False)
    yield service
    service.reindexer.stop()


def advance_days(svc: MemoryService, days: int) -> None:
    svc.clock.advance(days * 86400)  # type: ignore[attr-defined]


def save(svc: MemoryService, content: str, **kw) -> dict:
    return svc.save([MemoryInput(content, **kw)]).to_dict()["saved"][0]


@pytest.mark.parametrize(("item", "named"), [
    ({"content": "x", "tags": [f"t{i}" for i in range(17)]}, "17 tags"),
    ({"content": "x", "tags": ["two words"]}, '"two words"'),
    ({"content": "x", "tags": ["bell\x07"]}, "memories[1].tags[0]"),
    ({"content": "x", "tags": ["a" * 65]}, "65 characters"),
    ({"content": "x", "tags": [""]}, "is blank"),
    ({"content": "x", "tags": "billing"}, "list of strings"),
    ({"content": "x", "tags": [3]}, "must be a string"),
    ({"content": "x", "metadata": {"note": "y" * 2048}}, "1024 bytes"),
    ({"content": "x", "metadata": {"nested": {"a": 1}}}, "dict"),
    ({"content": "x", "metadata": {"list": [1]}}, "list"),
    ({"content": "x", "metadata": {"none": None}}, "NoneType"),
    ({"content": "x", "metadata": ["a"]}, "must be an object"),
    ({"content": "x", "metadata": {"n": float("nan")}}, "finite"),
    ({"content": "x", "labels": ["a"]}, "unknown field 'labels'"),
])
def test_bad_tags_and_metadata_are_invalid_requests_that_change_nothing(svc, item, named):
    with pytest.raises(InvalidRequestError) as caught:
        svc.save([{"content": "a good one"}, item])
    assert named in caught.value.message
    assert svc.list_page().to_dict()["total_count"] == 0


def test_tags_are_normalised_and_carried_by_every_result(svc):
    saved = save(svc, "billing moved to postgres", tags=[" Billing ", "DB", "billing"],
                 metadata={"project": "atlas", "priority": 2, "urgent": True})
    assert saved["tags"] == ["billing", "db"]
    assert saved["metadata"] == {"project": "atlas", "priority": 2, "urgent": True}
    got = svc.detail(saved["ref"]).to_dict()
    assert got["tags"] == ["billing", "db"] and got["metadata"]["priority"] == 2
    listed = svc.list_page(tags=["billing"]).to_dict()["memories"]
    assert [m["ref"] for m in listed] == [saved["ref"]] and listed[0]["tags"] == ["billing", "db"]
    recalled = svc.recall("billing postgres", tags=["db"]).to_dict()["memories"]
    assert [m["ref"] for m in recalled] == [saved["ref"]]
    assert recalled[0]["metadata"] == {"project": "atlas", "priority": 2, "urgent": True}
    untagged = save(svc, "lunch is at noon")
    assert "tags" not in untagged and "metadata" not in untagged


def test_secrets_in_tags_and_metadata_are_redacted(svc):
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    saved = save(svc, "deploy key rotated", tags=[token], metadata={"key": token})
    assert saved["tags"] == ["redacted:github-token"]
    assert saved["metadata"] == {"key": "[redacted:github-token]"}
    assert "redacted" in saved["notice"]


def test_filters_select_before_ranking(svc):
    for i in range(40):
        save(svc, f"weather report number {i} says sunny skies")
    rare = save(svc, "the zebra herd migrated north", tags=["rare"])
    found = svc.recall("weather report sunny skies", tags=["rare"], top_k=3).to_dict()
    assert [m["ref"] for m in found["memories"]] == [rare["ref"]]
    assert svc.recall("weather", metadata={"missing": "x"}).to_dict()["memories"] == []
    assert svc.recall(tags=["rare"]).to_dict()["memories"][0]["ref"] == rare["ref"]


def test_time_window_on_recall(svc):
    march = save(svc, "we decided to bill monthly")
    advance_days(svc, 10)
    later = save(svc, "we decided to bill weekly")
    found = svc.recall("what did we decide about billing", since="2026-03-05").to_dict()
    assert [m["ref"] for m in found["memories"]] == [later["ref"]]
    found = svc.recall("what did we decide about billing", until="2026-03-01").to_dict()
    assert [m["ref"] for m in found["memories"]] == [march["ref"]]
    with pytest.raises(InvalidRequestError, match="since is after until"):
        svc.recall("billing", since="2026-03-10", until="2026-03-01")
    with pytest.raises(InvalidRequestError, match="as_of"):
        svc.recall("billing", as_of="last tuesday")


def test_as_of_answers_with_the_versions_live_then(svc):
    old = save(svc, "the office is in berlin", tags=["office"])
    advance_days(svc, 10)  # 2026-03-11
    new = svc.update(old["ref"], "the office is in paris").to_dict()
    assert new["tags"] == ["office"]  # kept from the old version
    then = svc.recall("where is the office", as_of="2026-03-05").to_dict()
    assert [m["ref"] for m in then["memories"]] == [old["ref"]]
    assert "Historical view as of 2026-03-05T23:59:59Z" in then["notice"]
    now = svc.recall("where is the office").to_dict()
    assert [m["ref"] for m in now["memories"]] == [new["ref"]] and "notice" not in now
    before = svc.recall("where is the office", as_of="2026-02-01").to_dict()
    assert before["memories"] == [] and before["matched_count"] == 0
    assert svc.list_page(as_of="2026-02-01").to_dict()["total_count"] == 0
    assert [m.ref for m in svc.list_page(as_of="2026-03-05").memories] == [old["ref"]]
    assert svc.detail(new["ref"], as_of="2026-03-05").to_dict()["ref"] == old["ref"]
    assert svc.detail(old["ref"], as_of="2026-03-12").to_dict()["ref"] == new["ref"]
    with pytest.raises(MemoryNotFoundError, match="no version current"):
        svc.detail(old["ref"], as_of="2026-02-01")
    # An answer about the past counts nothing as recalled.
    assert svc.detail(old["ref"]).to_dict()["recall_count"] == 0


def test_an_update_that_only_changes_tags(svc):
    old = save(svc, "standup is at nine", tags=["team"], metadata={"room": "b2"})
    advance_days(svc, 1)
    new = svc.update(old["ref"], None, tags=["team", "meeting"]).to_dict()
    got = svc.detail(new["ref"]).to_dict()
    assert got["content"] == "standup is at nine" and got["tags"] == ["team", "meeting"]
    assert got["metadata"] == {"room": "b2"} and got["supersedes"] == old["ref"]
    assert svc.detail(old["ref"]).to_dict()["tags"] == ["team"]
    assert [m["ref"] for m in svc.list_page(tags=["meeting"]).to_dict()["memories"]] == [new["ref"]]
    cleared = svc.update(new["ref"], None, tags=[], metadata={}).to_dict()
    assert "tags" not in cleared and svc.detail(cleared["ref"]).to_dict()["metadata"] == {}
    with pytest.raises(InvalidRequestError):
        svc.update(cleared["ref"], None, tags=["no spaces allowed"])
    assert svc.detail(cleared["ref"]).to_dict()["superseded_by"] is None


def test_concurrent_tag_updates_lose_no_version(svc):
    first = save(svc, "the release is on friday", tags=["release"])
    outcomes: list[object] = []
    barrier = threading.Barrier(4)

    def update(tag: str) -> None:
        barrier.wait()
        try:
            outcomes.append(svc.update(first["ref"], None, tags=["release", tag]).to_dict())
        except MemoryAlreadySupersededError as exc:
            outcomes.append(exc)

    threads = [threading.Thread(target=update, args=(f"t{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [o for o in outcomes if isinstance(o, dict)]
    assert len(winners) == 1 and len(outcomes) == 4
    live = svc.list_page(tags=["release"]).to_dict()["memories"]
    assert [m["ref"] for m in live] == [winners[0]["ref"]]
    assert svc.detail(first["ref"]).to_dict()["superseded_by"] == winners[0]["ref"]
