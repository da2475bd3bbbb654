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
    ids += [old["id"], svc.update(old["id"], "The deadline is Monday.").to_dict()["id"]]
    svc.recall("deadline")
    svc.known_ids = ids  # type: ignore[attr-defined]
    return svc


def snapshot(svc: MemoryService, *, ignore_recalls: bool = False) -> Any:
    def clean(d: dict[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in d.items() if k not in ("current_time", "notice")}
        if ignore_recalls:
            out.pop("recall_count", None)
            out.pop("last_recalled_at", None)
        return out

    listed = svc.list_page(limit=200).to_dict()
    return (
        [clean(m) for m in listed["memories"]],
        listed["total_count"],
        [clean(svc.detail(i).to_dict()) for i in svc.known_ids],  # type: ignore[attr-defined]
    )


BAD_CALLS = [
    ("empty_memory", lambda s: s.save([{"content": "fine"}, {"content": "  "}]).to_dict()),
    ("empty_memory", lambda s: s.save([]).to_dict()),
    ("invalid_memory_kind", lambda s: s.save([{"content": "x", "kind": "fact"}]).to_dict()),
    ("invalid_request", lambda s: s.save([{"content": "x"}], session_id="a\nb").to_dict()),
    ("recall_budget", lambda s: s.recall("sqlite", top_k=0).to_dict()),
    ("recall_budget", lambda s: s.recall("sqlite", max_tokens=0).to_dict()),
    ("recall_budget", lambda s: s.list_page(offset=-1).to_dict()),
    ("recall_budget", lambda s: s.list_page(limit=0).to_dict()),
    ("invalid_request", lambda s: s.list_page(since="2026-31-07").to_dict()),
    ("invalid_request", lambda s: s.list_page(until="tomorrow").to_dict()),
    ("invalid_request", lambda s: s.list_page(search="x" * 201).to_dict()),
    ("invalid_request", lambda s: s.list_page(search="***").to_dict()),
    ("invalid_sort", lambda s: s.list_page(sort="relevance").to_dict()),
    ("session_not_found", lambda s: s.recall("sqlite", session_id="nope").to_dict()),
    ("session_not_found", lambda s: s.list_page(session_id="nope").to_dict()),
    ("memory_not_found", lambda s: s.detail("0123456789ab").to_dict()),
    ("memory_not_found", lambda s: s.delete("0123456789ab").to_dict()),
    ("empty_memory", lambda s: s.delete("").to_dict()),
    ("empty_memory", lambda s: s.update(s.known_ids[3], "").to_dict()),
    ("memory_already_superseded", lambda s: s.update(s.known_ids[2], "new text").to_dict()),
    ("invalid_request", lambda s: s.recall("x" * 5000).to_dict()),
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
    result = seeded.recall(text).to_dict()
    assert result["mode"] == "semantic"  # recall counts are the only permitted change
    assert snapshot(seeded, ignore_recalls=True) == before


@pytest.mark.parametrize("text", FTS_NASTIES)
def test_fts_syntax_in_list_search_never_breaks_or_changes_data(seeded, text):
    before = snapshot(seeded)
    try:
        page = seeded.list_page(search=text).to_dict()
    except TinyContextError as exc:  # only "no keywords at all" is refused
        assert exc.code == "invalid_request"
    else:
        assert page["total_count"] >= 0
    assert snapshot(seeded) == before


def test_fts_operator_words_are_matched_as_words(seeded):
    save(seeded, "NEAR and OR are words here")
    assert seeded.list_page(search="NEAR(").to_dict()["total_count"] == 1
    assert seeded.list_page(search="and or").to_dict()["total_count"] == 1
    assert seeded.list_page(search="sqlite*").to_dict()["total_count"] == 1


def test_one_megabyte_memory_is_saved_whole(make):
    # Far over the default hard limit (max_memory_tokens 8000): raised, it is stored whole.
    svc = make(save_length_notice_tokens=800, max_memory_tokens=300_000)
    content = ("word " * 209_715).strip()  # ~1 MiB
    [entry] = svc.save([{"content": content}]).to_dict()["saved"]
    assert entry["content_tokens"] == 209_715 and "notice" in entry
    assert svc.detail(entry["id"]).to_dict()["content"] == content
    result = svc.recall("word", max_tokens=100).to_dict()
    assert len(result["memories"]) == 1 and result["truncated"]
    assert svc.list_page().to_dict()["memories"][0]["preview_truncated"]
