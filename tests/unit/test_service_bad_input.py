"""Bad input always gets a clear error and never changes stored data (SPEC section 2)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.support import save
from tinycontext.app.service import MemoryService
from tinycontext.domain.errors import TinyContextError

FTS_NASTIES = ['"', "*", "NEAR(", "AND", "-", ":", "OR", "^", '"unterminated', "a AND b",
               "NEAR(x y, 2)", "col:sqlite", "-sqlite", "sqlite*", "(sqlite OR", "'; DROP TABLE--"]


@pytest.fixture
def seeded(svc, clock):
    ids = [m["id"] for m in save(svc, "The project uses SQLite.", session_id="p")]
    clock.advance(60)
    ids += [m["id"] for m in save(svc, "Call me Ann.", kind="profile")]
    clock.advance(60)
    [old] = save(svc, "The deadline is Friday.")
    ids += [old["id"], svc.update_memory(old["id"], "The deadline is Monday.")["id"]]
    svc.recall_memories("deadline")
    svc.known_ids = ids  # type: ignore[attr-defined]
    return svc


def snapshot(svc: MemoryService, *, ignore_recalls: bool = False) -> Any:
    def clean(d: dict[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in d.items() if k not in ("current_time", "notice")}
        if ignore_recalls:
            out.pop("recall_count", None)
            out.pop("last_recalled_at", None)
        return out

    listed = svc.list_memories(limit=200)
    return (
        [clean(m) for m in listed["memories"]],
        listed["total_count"],
        [clean(svc.get_memory(i)) for i in svc.known_ids],  # type: ignore[attr-defined]
    )


BAD_CALLS = [
    ("empty_memory", lambda s: s.save_memories([{"content": "fine"}, {"content": "  "}])),
    ("empty_memory", lambda s: s.save_memories([])),
    ("invalid_memory_kind", lambda s: s.save_memories([{"content": "x", "kind": "fact"}])),
    ("invalid_request", lambda s: s.save_memories([{"content": "x"}], session_id="a\nb")),
    ("recall_budget", lambda s: s.recall_memories("sqlite", top_k=0)),
    ("recall_budget", lambda s: s.recall_memories("sqlite", max_tokens=0)),
    ("recall_budget", lambda s: s.list_memories(offset=-1)),
    ("recall_budget", lambda s: s.list_memories(limit=0)),
    ("invalid_request", lambda s: s.list_memories(since="2026-31-07")),
    ("invalid_request", lambda s: s.list_memories(until="tomorrow")),
    ("invalid_request", lambda s: s.list_memories(search="x" * 201)),
    ("invalid_request", lambda s: s.list_memories(search="***")),
    ("invalid_sort", lambda s: s.list_memories(sort="relevance")),
    ("session_not_found", lambda s: s.recall_memories("sqlite", session_id="nope")),
    ("session_not_found", lambda s: s.list_memories(session_id="nope")),
    ("memory_not_found", lambda s: s.get_memory("0123456789ab")),
    ("memory_not_found", lambda s: s.delete_memory("0123456789ab")),
    ("empty_memory", lambda s: s.delete_memory("")),
    ("empty_memory", lambda s: s.update_memory(s.known_ids[3], "")),
    ("memory_already_superseded", lambda s: s.update_memory(s.known_ids[2], "new text")),
    ("invalid_request", lambda s: s.recall_memories("x" * 5000)),
]


@pytest.mark.parametrize(("code", "call"), BAD_CALLS)
def test_bad_input_changes_nothing(seeded, code, call):
    before = snapshot(seeded)
    with pytest.raises(TinyContextError) as info:
        call(seeded)
    assert info.value.code == code
    assert info.value.message.strip()
    assert snapshot(seeded) == before


@pytest.mark.parametrize("text", FTS_NASTIES)
def test_fts_syntax_in_recall_queries_is_harmless(seeded, text):
    before = snapshot(seeded, ignore_recalls=True)
    result = seeded.recall_memories(text)
    assert result["mode"] == "semantic"  # recall counts are the only permitted change
    assert snapshot(seeded, ignore_recalls=True) == before


@pytest.mark.parametrize("text", FTS_NASTIES)
def test_fts_syntax_in_list_search_never_breaks_or_changes_data(seeded, text):
    before = snapshot(seeded)
    try:
        page = seeded.list_memories(search=text)
    except TinyContextError as exc:  # only "no keywords at all" is refused
        assert exc.code == "invalid_request"
    else:
        assert page["total_count"] >= 0
    assert snapshot(seeded) == before


def test_fts_operator_words_are_matched_as_words(seeded):
    save(seeded, "NEAR and OR are words here")
    assert seeded.list_memories(search="NEAR(")["total_count"] == 1
    assert seeded.list_memories(search="and or")["total_count"] == 1
    assert seeded.list_memories(search="sqlite*")["total_count"] == 1


def test_one_megabyte_memory_is_saved_whole(make):
    # Far over the default hard limit (max_memory_tokens 8000): raised, it is stored whole.
    svc = make(save_length_notice_tokens=800, max_memory_tokens=300_000)
    content = ("word " * 209_715).strip()  # ~1 MiB
    [entry] = svc.save_memories([{"content": content}])["saved"]
    assert entry["content_tokens"] == 209_715 and "notice" in entry
    assert svc.get_memory(entry["id"])["content"] == content
    result = svc.recall_memories("word", max_tokens=100)
    assert len(result["memories"]) == 1 and result["truncated"]
    assert svc.list_memories()["memories"][0]["preview_truncated"]
