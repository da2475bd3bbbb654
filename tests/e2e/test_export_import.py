"""Export/import as JSON Lines: every field, streaming, idempotent, re-embedding, bad lines."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.servers import run_cli
from tests.fakes import FixedClock, HashEmbedder, WordTokenizer
from tinycontext.adapters.sqlite.store import SqliteStore
from tinycontext.app import transfer as export_import
from tinycontext.app.service import MemoryService
from tinycontext.app.transfer import export_jsonl, import_jsonl
from tinycontext.config.engine import TinyContextConfig
from tinycontext.domain.records import ImportFormatError
from tinycontext.entry.container import build_service

FIELDS = {"id", "ref", "kind", "session_id", "content", "created_at", "content_tokens",
          "recall_count", "last_recalled_at", "superseded_by", "superseded_at", "supersedes",
          "embedding_model", "embedding"}


def _service(path: Path, key: str = "hash-64") -> MemoryService:
    return build_service(TinyContextConfig(memory_db_path=str(path)), store=SqliteStore(path),
                         embedder=HashEmbedder(key=key), tokenizer=WordTokenizer(),
                         clock=FixedClock(), background=False)


@pytest.fixture
def source(tmp_path: Path) -> Iterator[MemoryService]:
    service = _service(tmp_path / "source.db")
    service.save([{"content": "Project Atlas uses Rust."},
                  {"content": "Atlas ships every second Friday."}], "atlas")
    service.save([{"content": "Project Borealis is written in Go."}], "borealis")
    service.save([{"content": "The user prefers terse answers.", "kind": "profile"}])
    ref = service.list_page(search="Rust").to_dict()["memories"][0]["ref"]
    service.update(ref, "Project Atlas moved from Rust to Zig.")
    service.recall("What language does Atlas use?", "atlas")
    yield service
    service.close()


def _export(service: MemoryService, **kwargs: Any) -> list[dict[str, Any]]:
    out = io.StringIO()
    export_jsonl(service.store, out, **kwargs)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_export_has_every_field_and_superseded_versions(source: MemoryService) -> None:
    rows = _export(source)
    assert len(rows) == 5 and all(set(r) == FIELDS for r in rows)
    assert sum(1 for r in rows if r["superseded_by"]) == 1
    assert all(r["embedding_model"] == source.model_key and r["embedding"] for r in rows)
    assert any(r["recall_count"] == 1 and r["last_recalled_at"] for r in rows)
    atlas = _export(source, session_id="atlas")
    assert {r["session_id"] for r in atlas} == {"atlas"} and len(atlas) == 3
    assert all(r["embedding"] is None for r in _export(source, with_embeddings=False))


def test_round_trip_is_exact_and_idempotent(source: MemoryService, tmp_path: Path) -> None:
    lines = [json.dumps(r) + "\n" for r in _export(source)]
    target = _service(tmp_path / "target.db")
    first = import_jsonl(target, lines)
    assert (first.imported, first.already_present, first.reembedded) == (5, 0, 0)
    again = import_jsonl(target, lines)
    assert (again.imported, again.already_present) == (0, 5)
    assert _export(target) == _export(source)
    query = "Which language does Atlas use?"
    hits = target.recall(query, "atlas").to_dict()["memories"]
    assert [m["id"] for m in hits] == [m["id"] for m in source.recall(query, "atlas").to_dict()[
        "memories"]]
    assert "Project Atlas uses Rust." not in [m["content"] for m in hits]  # still superseded


def test_import_re_embeds_when_the_model_differs(source: MemoryService, tmp_path: Path) -> None:
    lines = [json.dumps(r) for r in _export(source)]
    target = _service(tmp_path / "other-model.db", key="another-model")
    report = import_jsonl(target, lines, batch_size=2)
    assert report.reembedded == 5 == report.imported
    assert {r["embedding_model"] for r in _export(target)} == {target.model_key}
    assert target.recall("Go", "borealis").to_dict()["memories"][0]["scores"]["dense"] is not None


def test_malformed_line_is_refused_with_its_number_storing_nothing(
    source: MemoryService, tmp_path: Path,
) -> None:
    good = [json.dumps(r) for r in _export(source)]
    broken = {**json.loads(good[3]), "created_at": "yesterday"}
    target = _service(tmp_path / "target.db")
    for bad, why in ((json.dumps(broken), "created_at"), ("{not json", "not valid JSON"),
                     ('["a list"]', "not a JSON object"),
                     (json.dumps({**json.loads(good[3]), "kind": "note"}), "kind")):
        lines = [*good[:3], "", bad, good[4]]
        with pytest.raises(ImportFormatError) as caught:
            import_jsonl(target, lines, batch_size=2)
        assert caught.value.line == 5 and why in caught.value.message
        assert "Nothing was imported" in caught.value.message and _export(target) == []
    fixed = import_jsonl(target, good)
    assert (fixed.imported, fixed.already_present) == (5, 0)


def test_export_reads_the_store_a_page_at_a_time(source: MemoryService, monkeypatch: Any) -> None:
    monkeypatch.setattr(export_import, "PAGE", 2)
    reads: list[int] = []
    store = source.store
    original = store.export_page

    def counting(after: int, limit: int, session: str | None) -> Any:
        reads.append(limit)
        return original(after, limit, session)

    monkeypatch.setattr(store, "export_page", counting)
    assert len(_export(source)) == 5
    assert reads == [2, 2, 2, 2]  # three pages of data, one empty: memory stays bounded


@pytest.mark.slow
def test_cli_export_import_round_trip_with_the_real_model(tmp_path: Path) -> None:
    seed = tmp_path / "seed.jsonl"
    seed.write_text("".join(json.dumps({
        "id": f"0000000{i}-1111-4222-8333-444444444444", "kind": "episodic", "session_id": "s",
        "content": text, "created_at": f"2026-01-0{i}T08:00:00Z", "embedding_model": "old-model",
        "embedding": None}) + "\n" for i, text in enumerate(
        ["The cat is called Miso.", "Backups run nightly at 02:00.",
         "The staging database is on port 5433."], start=1)))
    done = run_cli(tmp_path, "import", str(seed))
    assert done.returncode == 0, done.stderr
    assert "3 imported" in done.stderr and "3 re-embedded" in done.stderr and done.stdout == ""
    again = run_cli(tmp_path, "import", str(seed))
    assert "0 imported, 3 already present" in again.stderr
    exported = run_cli(tmp_path, "export")
    rows = [json.loads(line) for line in exported.stdout.splitlines()]
    assert [r["created_at"] for r in rows] == [f"2026-01-0{i}T08:00:00Z" for i in (1, 2, 3)]
    assert all(r["embedding_model"].startswith("all-minilm") and r["embedding"] for r in rows)
    assert "3 memories written" in exported.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text(seed.read_text() + "this is not json\n")
    failed = run_cli(tmp_path, "import", str(bad))
    assert failed.returncode == 1 and "line 4" in failed.stderr


def test_export_messages_say_what_happened(tmp_path: Path) -> None:
    seed = tmp_path / "one.jsonl"
    seed.write_text(json.dumps({
        "id": "00000001-1111-4222-8333-444444444444", "kind": "episodic", "session_id": "work",
        "content": "The cat is called Miso.", "created_at": "2026-01-01T08:00:00Z",
        "embedding_model": "old-model", "embedding": None}) + "\n")
    assert run_cli(tmp_path, "import", str(seed)).returncode == 0
    one = run_cli(tmp_path, "export", "--no-embeddings")
    assert one.returncode == 0 and "1 memory written." in one.stderr, one.stderr
    # A session nothing was saved in is an error, as REST and the browser answer it.
    target = tmp_path / "nosuch.jsonl"
    nosuch = run_cli(tmp_path, "export", "--session", "nosuch", "-o", str(target))
    assert nosuch.returncode == 1 and "'nosuch'" in nosuch.stderr and not target.exists()
    assert "Nothing was written" in nosuch.stderr and "0 memories" not in nosuch.stderr
    # A missing folder is named as the user wrote it, never the temporary file's name.
    missing = tmp_path / "missing" / "dir" / "x.jsonl"
    failed = run_cli(tmp_path, "export", "-o", str(missing))
    assert failed.returncode == 1 and f"cannot write {missing}" in failed.stderr
    assert ".partial" not in failed.stderr and "Traceback" not in failed.stderr
