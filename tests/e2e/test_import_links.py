"""Import refuses supersede links that would hide memories: loops, self-links, missing ids."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.servers import run_cli
from tests.fakes import FixedClock, HashEmbedder, WordTokenizer
from tinycontext.adapters.sqlite.store import SqliteStore
from tinycontext.app.service import MemoryService
from tinycontext.app.transfer import export_jsonl, import_jsonl
from tinycontext.config.engine import TinyContextConfig
from tinycontext.domain.chains import Links, link_problems, mend_links
from tinycontext.domain.records import ImportFormatError
from tinycontext.entry.container import build_service

IDS = [f"{i:08x}-1111-4222-8333-444444444444" for i in range(1, 8)]


def _row(n: int, **links: Any) -> dict[str, Any]:
    return {"id": IDS[n], "kind": "episodic", "session_id": "s", "content": f"Fact number {n}.",
            "created_at": f"2026-01-0{n + 1}T08:00:00Z", "embedding": None, **links}


def _lines(*rows: dict[str, Any]) -> list[str]:
    return [json.dumps(r) + "\n" for r in rows]


@pytest.fixture
def target(tmp_path: Path) -> Iterator[MemoryService]:
    path = tmp_path / "target.db"
    service = build_service(TinyContextConfig(memory_db_path=str(path)), store=SqliteStore(path),
                            embedder=HashEmbedder(), tokenizer=WordTokenizer(),
                            clock=FixedClock(), background=False)
    yield service
    service.close()


def _stored(service: MemoryService) -> int:
    out = io.StringIO()
    return export_jsonl(service.store, out)


BAD_FILES = {
    "self-link": ([_row(0), _row(1, superseded_by=IDS[1], superseded_at="2026-01-03T08:00:00Z")],
                  2, "points at the memory itself"),
    "two-cycle": ([_row(0), _row(1, superseded_by=IDS[2]), _row(2, superseded_by=IDS[1])],
                  2, f"cycle ({IDS[1]} -> {IDS[2]} -> {IDS[1]})"),
    "three-cycle": ([_row(3, superseded_by=IDS[4]), _row(4, superseded_by=IDS[5]), _row(0),
                     _row(5, superseded_by=IDS[3])], 1, "superseded_by links form a cycle"),
    "supersedes-cycle": ([_row(0), _row(1, supersedes=IDS[2]), _row(2, supersedes=IDS[1])],
                         2, "supersedes links form a cycle"),
    "missing-successor": ([_row(0), _row(1), _row(2, superseded_by=IDS[6])], 3,
                          f"superseded_by points at {IDS[6]}, which is neither in the file"),
    "missing-predecessor": ([_row(0, supersedes=IDS[6])], 1, "supersedes points at"),
    "successor-names-another": (
        [_row(0, superseded_by=IDS[1]), _row(1, supersedes=IDS[2]), _row(2, superseded_by=IDS[1])],
        1, f"superseded_by points at {IDS[1]}, which says it supersedes {IDS[2]}"),
    "successor-names-none": ([_row(3), _row(0, superseded_by=IDS[1]), _row(1)], 2,
                             "which says it supersedes nothing"),
    "predecessor-says-none": ([_row(0), _row(1, supersedes=IDS[0])], 2,
                              f"supersedes points at {IDS[0]}, which says it is superseded by "
                              "nothing"),
    "two-successors": ([_row(0, superseded_by=IDS[1]), _row(1, supersedes=IDS[0]),
                        _row(2, supersedes=IDS[0])], 3,
                       f"which says it is superseded by {IDS[1]}"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_links_are_refused_with_their_line_and_nothing_is_stored(
    target: MemoryService, case: str,
) -> None:
    rows, line, why = BAD_FILES[case]
    with pytest.raises(ImportFormatError) as caught:
        import_jsonl(target, _lines(*rows), batch_size=1)
    assert caught.value.line == line and why in caught.value.message, caught.value.message
    assert caught.value.code == "invalid_request" and "Nothing was imported" in caught.value.message
    assert _stored(target) == 0


def test_links_may_point_forward_or_at_stored_memories(target: MemoryService) -> None:
    at = "2026-01-05T08:00:00Z"
    first = _lines(_row(0, superseded_by=IDS[1], superseded_at=at), _row(1, supersedes=IDS[0]))
    assert import_jsonl(target, first, batch_size=1).imported == 2
    # A later file may continue a chain whose older versions are already stored: the stored
    # live version is then marked superseded, so deleting the new one brings it back.
    later = _lines(_row(2, supersedes=IDS[1]))
    assert import_jsonl(target, later).imported == 1
    live = [m["id"] for m in target.list_page(limit=10).to_dict()["memories"]]
    assert live == [IDS[2]]
    assert target.detail(IDS[1]).to_dict()["superseded_by"] == IDS[2].replace("-", "")[:12]
    target.delete(IDS[2])
    assert [m["id"] for m in target.list_page(limit=10).to_dict()["memories"]] == [IDS[1]]


STORED_THEN_BAD = {
    "stored-successor-names-none": (
        [_row(1)], [_row(0, superseded_by=IDS[1])], 1,
        f"superseded_by points at {IDS[1]}, which says it supersedes nothing"),
    "stored-predecessor-taken": (
        [_row(0, superseded_by=IDS[1]), _row(1, supersedes=IDS[0])],
        [_row(3), _row(2, supersedes=IDS[0])], 2, f"which says it is superseded by {IDS[1]}"),
    "stored-predecessor-claimed-twice": (
        [_row(0)], [_row(1, supersedes=IDS[0]), _row(2, supersedes=IDS[0])], 2,
        f"which {IDS[1]} supersedes too"),
}


@pytest.mark.parametrize("case", sorted(STORED_THEN_BAD))
def test_links_must_agree_with_stored_memories(target: MemoryService, case: str) -> None:
    first, second, line, why = STORED_THEN_BAD[case]
    stored = import_jsonl(target, _lines(*first)).imported
    with pytest.raises(ImportFormatError) as caught:
        import_jsonl(target, _lines(*second))
    assert caught.value.line == line and why in caught.value.message, caught.value.message
    assert _stored(target) == stored


def test_a_bad_line_anywhere_stores_nothing_from_a_pipe(target: MemoryService) -> None:
    """A one-shot stream (stdin) is read twice through a private spool file."""
    rows = [_row(0), _row(1), _row(2, superseded_by=IDS[6])]
    with pytest.raises(ImportFormatError) as caught:
        import_jsonl(target, (line for line in _lines(*rows)), batch_size=1)
    assert caught.value.line == 3 and _stored(target) == 0
    report = import_jsonl(target, (line.rstrip("\n") for line in _lines(*rows[:2])))
    assert report.imported == 2 and _stored(target) == 2


def test_cycle_members_are_reported_once_on_the_earliest() -> None:
    links = {IDS[2]: Links(IDS[3]), IDS[3]: Links(IDS[4]), IDS[4]: Links(IDS[2]),
             IDS[5]: Links(supersedes=IDS[5]), IDS[0]: Links(IDS[1])}
    problems = link_problems(links, lambda i: i == IDS[1])
    assert [(p.memory_id, p.field, p.cycle) for p in problems] == [
        (IDS[5], "supersedes", ()),
        (IDS[2], "superseded_by", (IDS[2], IDS[3], IDS[4])),
    ]


def test_mending_bridges_a_lost_version_drops_dangling_links_and_cuts_loops() -> None:
    a, b, c, d, e, f, lost = IDS
    links = {a: Links(superseded_by=lost), c: Links(supersedes=lost),  # a -> (lost) -> c
             d: Links(superseded_by=e), e: Links(superseded_by=d),  # a loop: e is newest
             f: Links(supersedes="99999999-1111-4222-8333-444444444444")}
    order = {a: 0, b: 1, c: 2, d: 3, e: 4, f: 5}
    assert mend_links(links, order) == 4
    assert links[a] == Links(superseded_by=c) and links[c] == Links(supersedes=a)
    assert links[e] == Links() and links[d] == Links(superseded_by=e)
    assert links[f] == Links() and link_problems(links, order.__contains__) == []


@pytest.mark.slow
def test_cli_import_refuses_a_cycle_without_storing(tmp_path: Path) -> None:
    bad = tmp_path / "cycle.jsonl"
    bad.write_text("".join(_lines(_row(0), _row(1, superseded_by=IDS[2]),
                                  _row(2, superseded_by=IDS[1]))))
    done = run_cli(tmp_path, "import", str(bad))
    assert done.returncode == 1 and "line 2" in done.stderr and "cycle" in done.stderr
    assert "Traceback" not in done.stderr
    exported = run_cli(tmp_path, "export")
    assert exported.returncode == 0 and exported.stdout == ""


@pytest.mark.parametrize("field", ["created_at", "last_recalled_at", "superseded_at"])
def test_timestamps_in_the_future_are_refused_with_their_line(
    target: MemoryService, field: str,
) -> None:
    now = target.core.clock.now()  # FixedClock: 2026-07-31T10:15:00Z
    soon = (now + timedelta(minutes=4)).strftime("%Y-%m-%dT%H:%M:%SZ")
    later = (now + timedelta(minutes=6)).strftime("%Y-%m-%dT%H:%M:%SZ")
    rows = [_row(0), {**_row(1), field: later}]
    with pytest.raises(ImportFormatError) as caught:
        import_jsonl(target, _lines(*rows))
    assert caught.value.line == 2 and f"{field} {later} is in the future" in caught.value.message
    assert _stored(target) == 0
    # Another machine's clock a few minutes ahead is not a reason to refuse a file.
    assert import_jsonl(target, _lines(_row(0), {**_row(1), field: soon})).imported == 2
