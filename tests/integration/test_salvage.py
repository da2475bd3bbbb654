"""Salvage (`tinycontext repair`): every readable memory of damaged SQLite files, page by page."""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.store_damage import (
    build_store,
    fact,
    leaf_holding,
    open_service,
    root_page,
    smash,
    table_pages,
)
from tinycontext.adapters.sqlite.pages import UnreadableFileError
from tinycontext.adapters.sqlite.salvage import SalvageReport, salvage_jsonl
from tinycontext.app.service import MemoryService
from tinycontext.app.transfer import export_jsonl, import_jsonl


def _salvage(path: Path, **kwargs: Any) -> tuple[list[dict[str, Any]], SalvageReport]:
    out = io.StringIO()
    report = salvage_jsonl(path, out, **kwargs)
    return [json.loads(line) for line in out.getvalue().splitlines()], report


def _export(service: MemoryService, **kwargs: Any) -> str:
    out = io.StringIO()
    export_jsonl(service.store, out, **kwargs)
    return out.getvalue()


def _ids(rows: list[dict[str, Any]]) -> list[str]:
    return [r["id"] for r in rows]


def test_a_healthy_store_salvages_exactly_as_it_exports(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    service = open_service(path)
    service.save([{"content": fact(i)} for i in range(40)], "a")
    service.save([{"content": "A long note. " * 900}], "b")  # overflow pages
    service.save([{"content": "The user likes tea.", "kind": "profile"}])
    ref = service.list_page(search="Fact #0003#").to_dict()["memories"][0]["ref"]
    service.update(ref, "Fact three, corrected.")
    service.recall("word5 word12", "a")
    expected = {"": _export(service), "a": _export(service, session_id="a"),
                "bare": _export(service, with_embeddings=False)}
    service.close()
    for key, kwargs in (("", {}), ("a", {"session_id": "a"}),
                        ("bare", {"with_embeddings": False})):
        out = io.StringIO()
        report = salvage_jsonl(path, out, **kwargs)
        assert out.getvalue() == expected[key], key
        assert (report.bad_pages, report.bad_rows, report.unconfirmed, report.lost) == (0,) * 4
    assert len(expected[""].splitlines()) == 43


def test_a_bad_leaf_page_loses_only_its_own_rows(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    ids = build_store(path, 120)
    number, page = leaf_holding(path, "#0050#")
    on_page = {i for n, i in enumerate(ids) if f"#{n:04d}#".encode() in page}
    smash(path, number)
    rows, report = _salvage(path)
    assert _ids(rows) == [i for i in ids if i not in on_page]  # oldest first, as export
    assert report.bad_pages == 1 and report.lost == len(on_page) > 0


def test_a_broken_interior_page_hides_nothing(tmp_path: Path) -> None:
    """The leaves under a broken interior page are found by scanning the file."""
    path = tmp_path / "m.db"
    ids = build_store(path, 200)
    assert table_pages(path, "internal") == [root_page(path, "memories")]
    smash(path, root_page(path, "memories"))
    rows, report = _salvage(path)
    assert _ids(rows) == ids and report.bad_pages == 1 and report.lost == 0


def test_rows_of_deleted_memories_never_come_back(tmp_path: Path) -> None:
    """Free pages keep deleted rows; with the header (free list) and the table root gone,
    only rows that an index still lists are written."""
    path = tmp_path / "m.db"
    service = open_service(path)
    saved = service.save([{"content": fact(i)} for i in range(300)], "s").to_dict()["saved"]
    ids = [m["id"] for m in saved]
    for memory_id in ids[100:200]:
        service.delete(memory_id)
    service.close()
    left = path.read_bytes()
    assert sum(i.encode() in left for i in ids[100:200]) > 50  # their rows are still there
    smash(path, 1, root_page(path, "memories"))
    rows, report = _salvage(path)
    assert _ids(rows) == ids[:100] + ids[200:]
    assert report.unconfirmed > 0


def test_a_truncated_file_keeps_what_is_left(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    ids = build_store(path, 200)
    os.truncate(path, path.stat().st_size // 2)
    rows, report = _salvage(path)
    assert 0 < len(rows) < len(ids) and _ids(rows) == ids[:len(rows)]
    assert report.bad_pages > 0 and report.lost == len(ids) - len(rows)


def test_an_overwritten_header_is_not_the_end(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    ids = build_store(path, 60)
    with path.open("r+b") as f:
        f.write(b"this is not SQLite any more" * 3)
    assert _ids(_salvage(path)[0]) == ids


def test_a_broken_overflow_chain_loses_that_memory_only(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    service = open_service(path)
    service.save([{"content": "short one"}, {"content": "Long " + "x" * 9000},
                  {"content": "short two"}])
    service.close()
    data = path.read_bytes()
    size = 4096
    # An overflow page holds only content: the page that is all 'x' after its 4-byte link.
    over = next(n for n in range(1, len(data) // size + 1)
                if data[(n - 1) * size + 4:n * size].count(b"x") == size - 4)
    smash(path, over, zero=True)
    rows, report = _salvage(path)
    assert [r["content"] for r in rows] == ["short one", "short two"]
    assert report.bad_rows == 1


def test_a_lost_middle_version_is_bridged_so_the_newest_stays_live(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    service = open_service(path)
    first = service.save([{"content": "Deploys happen on Monday."}] + [
        {"content": fact(i)} for i in range(30)], "s").to_dict()["saved"][0]
    middle = service.update(first["ref"], "Deploys happen on Tuesday. " + "pad " * 800).to_dict()
    newest = service.update(middle["ref"], "Deploys happen on Friday.").to_dict()
    service.close()
    number, page = leaf_holding(path, "Deploys happen on Tuesday.")
    assert b"Deploys happen on Friday." not in page and b"on Monday." not in page
    smash(path, number)
    rows, report = _salvage(path)
    by_id = {r["id"]: r for r in rows}
    assert middle["id"] not in by_id and report.links_fixed == 2
    assert by_id[first["id"]]["superseded_by"] == newest["id"]
    assert by_id[newest["id"]]["supersedes"] == first["id"]
    target = open_service(tmp_path / "fresh.db")
    try:
        report_in = import_jsonl(target, [json.dumps(r) for r in rows])
        assert report_in.imported == len(rows)
        live = target.list_page(search="Deploys").to_dict()["memories"]
        assert [m["content"] for m in live] == ["Deploys happen on Friday."]
    finally:
        target.close()


def test_commits_still_in_the_write_ahead_log_are_read(tmp_path: Path) -> None:
    path, copy = tmp_path / "m.db", tmp_path / "copy" / "m.db"
    service = open_service(path)
    saved = service.save([{"content": fact(i)} for i in range(50)], "s").to_dict()["saved"]
    copy.parent.mkdir()
    shutil.copy(path, copy)  # copied while open: the log is not merged into the file yet
    shutil.copy(f"{path}-wal", f"{copy}-wal")
    service.close()
    assert Path(f"{copy}-wal").stat().st_size > 0
    assert fact(0).encode() not in copy.read_bytes()  # the memories are in the log only
    assert _ids(_salvage(copy)[0]) == [m["id"] for m in saved]


def test_empty_and_garbage_files(tmp_path: Path) -> None:
    empty, garbage = tmp_path / "empty.db", tmp_path / "garbage.db"
    empty.touch()
    assert _salvage(empty) == ([], SalvageReport())
    garbage.write_bytes(bytes(range(256)) * 64)
    with pytest.raises(UnreadableFileError):
        _salvage(garbage)


def test_long_runs_report_progress(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tinycontext.adapters.sqlite import salvage as sqlite_salvage

    path = tmp_path / "m.db"
    build_store(path, 30)
    monkeypatch.setattr(sqlite_salvage, "PROGRESS_SECONDS", 0.0)  # every step, for the test
    said: list[str] = []
    salvage_jsonl(path, io.StringIO(), progress=said.append)
    assert any(s.startswith("read 1 of ") and s.endswith(" table pages...") for s in said)
    assert said[-1] == "wrote 30 of 30 memories..."
