"""recall_memories(count=False): the same answer as a real recall, but no recall counted."""

from __future__ import annotations

from tests.unit.support import save


def _strip(result):
    return {k: v for k, v in result.items() if k != "current_time"}


def test_preview_answers_like_recall_without_counting(svc):
    save(svc, "The project uses SQLite for local state.")
    save(svc, "The user likes green tea.")
    save(svc, "Deployments run on Fridays.", kind="profile")
    preview = svc.recall("sqlite state", count=False).to_dict()
    counts = {m["id"]: m["recall_count"] for m in svc.list_page().to_dict()["memories"]}
    assert all(c == 0 for c in counts.values())
    assert preview["memories"] and preview["memories"][0]["scores"]["fused"] > 0
    real = svc.recall("sqlite state").to_dict()
    assert _strip(preview) == _strip(real)
    counted = {m["id"]: m["recall_count"] for m in svc.list_page().to_dict()["memories"]}
    assert {m["id"] for m in real["memories"]} == {i for i, c in counted.items() if c == 1}
