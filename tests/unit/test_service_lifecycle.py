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
    result = svc.update_memory(old["ref"], "  The deadline is Monday. ")
    assert result["supersedes"] == {"id": old["id"], "ref": old["ref"]}
    assert (result["session_id"], result["kind"], result["content_tokens"]) == ("p", "episodic", 4)
    assert result["created_at"] == "2026-07-31T10:16:00Z" and result["id"] != old["id"]
    got_old = svc.get_memory(old["id"])
    assert got_old["superseded_by"] == result["ref"]
    assert got_old["superseded_at"] == "2026-07-31T10:16:00Z"
    got_new = svc.get_memory(result["id"])
    assert got_new["content"] == "The deadline is Monday." and got_new["supersedes"] == old["ref"]
    assert [m["id"] for m in svc.list_memories()["memories"]] == [result["id"]]
    assert [m["id"] for m in svc.recall_memories("deadline")["memories"]] == [result["id"]]


def test_update_keeps_profile_kind(svc):
    [old] = save(svc, "Call me Ann.", kind="profile")
    result = svc.update_memory(old["id"], "Call me Annie.")
    assert result["kind"] == "profile" and result["session_id"] is None
    assert [p["content"] for p in svc.recall_memories()["profile"]] == ["Call me Annie."]


def test_update_of_superseded_memory(svc):
    [old] = save(svc, "The deadline is Friday.")
    svc.update_memory(old["id"], "The deadline is Monday.")
    with pytest.raises(MemoryAlreadySupersededError):
        svc.update_memory(old["id"], "The deadline is Tuesday.")
    assert svc.list_memories()["total_count"] == 1


def test_update_errors_change_nothing(svc):
    [old] = save(svc, "The deadline is Friday.")
    with pytest.raises(EmptyMemoryError):
        svc.update_memory(old["id"], "   ")
    with pytest.raises(MemoryNotFoundError):
        svc.update_memory("0123456789ab", "x")
    assert svc.get_memory(old["id"])["superseded_by"] is None
    assert svc.list_memories()["total_count"] == 1


def test_update_long_content_notice(make):
    svc = make(save_length_notice_tokens=3)
    [old] = save(svc, "short")
    assert "notice" in svc.update_memory(old["id"], "now it is much longer")


def test_delete_plain_memory(svc):
    [m] = save(svc, "Temporary fact.")
    assert svc.delete_memory(m["ref"]) == {"id": m["id"], "ref": m["ref"], "deleted": True}
    with pytest.raises(MemoryNotFoundError):
        svc.get_memory(m["id"])
    with pytest.raises(MemoryNotFoundError):
        svc.delete_memory(m["id"])
    assert svc.recall_memories("Temporary fact")["memories"] == []


def test_delete_restores_the_previous_version(svc):
    [y] = save(svc, "The deadline is Friday.")
    x = svc.update_memory(y["id"], "The deadline is Monday.")
    result = svc.delete_memory(x["id"])
    assert result == {"id": x["id"], "ref": x["ref"], "deleted": True,
                      "restored": {"id": y["id"], "ref": y["ref"]}}
    got = svc.get_memory(y["id"])
    assert got["superseded_by"] is None and got["superseded_at"] is None
    assert [m["id"] for m in svc.list_memories()["memories"]] == [y["id"]]
    assert [m["id"] for m in svc.recall_memories("deadline Friday")["memories"]] == [y["id"]]
    svc.update_memory(y["id"], "The deadline is Sunday.")  # live again, so updatable


def test_delete_middle_of_chain_relinks(svc):
    [y] = save(svc, "Version one of the plan.")
    x = svc.update_memory(y["id"], "Version two of the plan.")
    z = svc.update_memory(x["id"], "Version three of the plan.")
    result = svc.delete_memory(x["id"])
    assert "restored" not in result
    assert svc.get_memory(y["id"])["superseded_by"] == z["ref"]
    assert svc.get_memory(z["id"])["supersedes"] == y["ref"]
    assert [m["id"] for m in svc.list_memories()["memories"]] == [z["id"]]
    # deleting the head now restores the oldest version
    assert svc.delete_memory(z["id"])["restored"]["id"] == y["id"]
    assert [m["id"] for m in svc.list_memories()["memories"]] == [y["id"]]


def test_delete_oldest_of_chain_keeps_the_head_live(svc):
    [y] = save(svc, "Version one of the plan.")
    x = svc.update_memory(y["id"], "Version two of the plan.")
    assert "restored" not in svc.delete_memory(y["id"])
    assert [m["id"] for m in svc.list_memories()["memories"]] == [x["id"]]
    assert "restored" not in svc.delete_memory(x["id"])
    assert svc.list_memories()["total_count"] == 0


CLASHING = ["12345678-9abc-4def-8000-000000000001", "12345678-9abc-4def-8000-000000000002",
            "fedcba98-7654-4321-8000-000000000003"]


def test_ambiguous_ref(make):
    ids = iter(CLASHING)
    svc = make(new_id=lambda: next(ids))
    save(svc, "First fact here.", "Second unrelated thing.")
    with pytest.raises(AmbiguousMemoryReferenceError) as info:
        svc.get_memory("123456789abc")
    assert CLASHING[0] in info.value.message and CLASHING[1] in info.value.message
    for call in (lambda: svc.update_memory("123456789ABC", "x"),
                 lambda: svc.delete_memory("123456789abc")):
        with pytest.raises(AmbiguousMemoryReferenceError):
            call()
    assert svc.get_memory(CLASHING[1])["content"] == "Second unrelated thing."
    assert svc.list_memories()["total_count"] == 2
    svc.delete_memory(CLASHING[0])
    assert svc.get_memory("123456789abc")["id"] == CLASHING[1]


def test_new_id_is_used_for_saves_and_updates(make):
    counter = itertools.count(1)
    svc = make(new_id=lambda: f"00000000-0000-4000-8000-{next(counter):012d}")
    [m] = save(svc, "A fact.")
    assert m["id"] == "00000000-0000-4000-8000-000000000001"
    assert svc.update_memory(m["id"], "A new fact.")["id"].endswith("000000000002")


def test_delete_oldest_version_clears_the_dangling_supersedes(svc):
    [y] = save(svc, "Version one of the plan.")
    x = svc.update_memory(y["id"], "Version two of the plan.")
    svc.delete_memory(y["id"])
    assert svc.get_memory(x["id"])["supersedes"] is None
