"""update_memory, delete_memory and id/ref resolution over the fakes."""

from __future__ import annotations

import itertools

import pytest

from tests.unit.support import save
from tinycontext.domain.errors import (
    AmbiguousMemoryReferenceError,
    EmptyMemoryError,
    MemoryAlreadySupersededError,
    MemoryNotFoundError,
)


def test_update_replaces_and_hides_the_old_version(svc, clock):
    [old] = save(svc, "The deadline is Friday.", session_id="p")
    clock.advance(60)
    result = svc.update(old["ref"], "  The deadline is Monday. ").to_dict()
    assert result["supersedes"] == {"id": old["id"], "ref": old["ref"]}
    assert (result["session_id"], result["kind"], result["content_tokens"]) == ("p", "episodic", 4)
    assert result["created_at"] == "2026-07-31T10:16:00Z" and result["id"] != old["id"]
    got_old = svc.detail(old["id"]).to_dict()
    assert got_old["superseded_by"] == result["ref"]
    assert got_old["superseded_at"] == "2026-07-31T10:16:00Z"
    got_new = svc.detail(result["id"]).to_dict()
    assert got_new["content"] == "The deadline is Monday." and got_new["supersedes"] == old["ref"]
    assert [m["id"] for m in svc.list_page().to_dict()["memories"]] == [result["id"]]
    assert [m["id"] for m in svc.recall("deadline").to_dict()["memories"]] == [result["id"]]


def test_update_keeps_profile_kind(svc):
    [old] = save(svc, "Call me Ann.", kind="profile")
    result = svc.update(old["id"], "Call me Annie.").to_dict()
    assert result["kind"] == "profile" and result["session_id"] is None
    assert [p["content"] for p in svc.recall().to_dict()["profile"]] == ["Call me Annie."]


def test_update_of_superseded_memory(svc):
    [old] = save(svc, "The deadline is Friday.")
    svc.update(old["id"], "The deadline is Monday.")
    with pytest.raises(MemoryAlreadySupersededError):
        svc.update(old["id"], "The deadline is Tuesday.")
    assert svc.list_page().to_dict()["total_count"] == 1


def test_update_errors_change_nothing(svc):
    [old] = save(svc, "The deadline is Friday.")
    with pytest.raises(EmptyMemoryError):
        svc.update(old["id"], "   ")
    with pytest.raises(MemoryNotFoundError):
        svc.update("0123456789ab", "x")
    assert svc.detail(old["id"]).to_dict()["superseded_by"] is None
    assert svc.list_page().to_dict()["total_count"] == 1


def test_update_long_content_notice(make):
    svc = make(save_length_notice_tokens=3)
    [old] = save(svc, "short")
    assert "notice" in svc.update(old["id"], "now it is much longer").to_dict()


def test_delete_plain_memory(svc):
    [m] = save(svc, "Temporary fact.")
    assert svc.delete(m["ref"]).to_dict() == {"id": m["id"], "ref": m["ref"], "deleted": True}
    with pytest.raises(MemoryNotFoundError):
        svc.detail(m["id"])
    with pytest.raises(MemoryNotFoundError):
        svc.delete(m["id"])
    assert svc.recall("Temporary fact").to_dict()["memories"] == []


def test_delete_restores_the_previous_version(svc):
    [y] = save(svc, "The deadline is Friday.")
    x = svc.update(y["id"], "The deadline is Monday.").to_dict()
    result = svc.delete(x["id"]).to_dict()
    assert result == {"id": x["id"], "ref": x["ref"], "deleted": True,
                      "restored": {"id": y["id"], "ref": y["ref"]}}
    got = svc.detail(y["id"]).to_dict()
    assert got["superseded_by"] is None and got["superseded_at"] is None
    assert [m["id"] for m in svc.list_page().to_dict()["memories"]] == [y["id"]]
    assert [m["id"] for m in svc.recall("deadline Friday").to_dict()["memories"]] == [y["id"]]
    svc.update(y["id"], "The deadline is Sunday.")  # live again, so updatable


def test_delete_middle_of_chain_relinks(svc):
    [y] = save(svc, "Version one of the plan.")
    x = svc.update(y["id"], "Version two of the plan.").to_dict()
    z = svc.update(x["id"], "Version three of the plan.").to_dict()
    result = svc.delete(x["id"]).to_dict()
    assert "restored" not in result
    assert svc.detail(y["id"]).to_dict()["superseded_by"] == z["ref"]
    assert svc.detail(z["id"]).to_dict()["supersedes"] == y["ref"]
    assert [m["id"] for m in svc.list_page().to_dict()["memories"]] == [z["id"]]
    # deleting the head now restores the oldest version
    assert svc.delete(z["id"]).to_dict()["restored"]["id"] == y["id"]
    assert [m["id"] for m in svc.list_page().to_dict()["memories"]] == [y["id"]]


def test_delete_oldest_of_chain_keeps_the_head_live(svc):
    [y] = save(svc, "Version one of the plan.")
    x = svc.update(y["id"], "Version two of the plan.").to_dict()
    assert "restored" not in svc.delete(y["id"]).to_dict()
    assert [m["id"] for m in svc.list_page().to_dict()["memories"]] == [x["id"]]
    assert "restored" not in svc.delete(x["id"]).to_dict()
    assert svc.list_page().to_dict()["total_count"] == 0


CLASHING = ["12345678-9abc-4def-8000-000000000001", "12345678-9abc-4def-8000-000000000002",
            "fedcba98-7654-4321-8000-000000000003"]


def test_ambiguous_ref(make):
    ids = iter(CLASHING)
    svc = make(new_id=lambda: next(ids))
    save(svc, "First fact here.", "Second unrelated thing.")
    with pytest.raises(AmbiguousMemoryReferenceError) as info:
        svc.detail("123456789abc")
    assert CLASHING[0] in info.value.message and CLASHING[1] in info.value.message
    for call in (lambda: svc.update("123456789ABC", "x").to_dict(),
                 lambda: svc.delete("123456789abc").to_dict()):
        with pytest.raises(AmbiguousMemoryReferenceError):
            call()
    assert svc.detail(CLASHING[1]).to_dict()["content"] == "Second unrelated thing."
    assert svc.list_page().to_dict()["total_count"] == 2
    svc.delete(CLASHING[0])
    assert svc.detail("123456789abc").to_dict()["id"] == CLASHING[1]


def test_new_id_is_used_for_saves_and_updates(make):
    counter = itertools.count(1)
    svc = make(new_id=lambda: f"00000000-0000-4000-8000-{next(counter):012d}")
    [m] = save(svc, "A fact.")
    assert m["id"] == "00000000-0000-4000-8000-000000000001"
    assert svc.update(m["id"], "A new fact.").to_dict()["id"].endswith("000000000002")


def test_delete_oldest_version_clears_the_dangling_supersedes(svc):
    [y] = save(svc, "Version one of the plan.")
    x = svc.update(y["id"], "Version two of the plan.").to_dict()
    svc.delete(y["id"])
    assert svc.detail(x["id"]).to_dict()["supersedes"] is None
