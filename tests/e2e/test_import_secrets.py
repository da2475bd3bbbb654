"""`tinycontext import` of an export that holds a secret stores the placeholder and says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.servers import run_cli

TOKEN = "ghp_5FWqS0UW13SlKKby36dyp5qaOveMCPvenqsV"


@pytest.mark.slow
def test_cli_import_replaces_secrets(tmp_path: Path) -> None:
    seed = tmp_path / "old-export.jsonl"
    seed.write_text(json.dumps({
        "id": "00000001-1111-4222-8333-444444444444", "kind": "episodic", "session_id": None,
        "content": f"CI pushes with {TOKEN}", "created_at": "2026-01-01T08:00:00Z",
        "embedding_model": None, "embedding": None}) + "\n")
    done = run_cli(tmp_path, "import", str(seed))
    assert done.returncode == 0, done.stderr
    assert "secrets replaced by [redacted:<type>] in 1 memories" in done.stderr
    assert TOKEN not in done.stderr
    exported = run_cli(tmp_path, "export")
    assert [json.loads(line)["content"] for line in exported.stdout.splitlines()] == [
        "CI pushes with [redacted:github-token]"]


def test_import_refuses_a_session_id_that_looks_like_a_secret(tmp_path: Path) -> None:
    from tests.fakes import FixedClock, HashEmbedder, WordTokenizer
    from tinycontext.adapters.sqlite.store import SqliteStore
    from tinycontext.app.transfer import export_jsonl, import_jsonl
    from tinycontext.config.engine import TinyContextConfig
    from tinycontext.domain.records import ImportFormatError
    from tinycontext.entry.container import build_service

    path = tmp_path / "target.db"
    service = build_service(TinyContextConfig(memory_db_path=str(path)), store=SqliteStore(path),
                            embedder=HashEmbedder(), tokenizer=WordTokenizer(),
                            clock=FixedClock(), background=False)
    rows = [{"id": f"0000000{n}-1111-4222-8333-444444444444", "kind": "episodic",
             "session_id": session, "content": f"Fact {n}.", "created_at": "2026-01-01T08:00:00Z",
             "embedding": None} for n, session in ((1, "work"), (2, TOKEN))]
    try:
        with pytest.raises(ImportFormatError) as caught:
            import_jsonl(service, [json.dumps(r) + "\n" for r in rows])
        assert caught.value.line == 2 and "session_id looks like a secret" in caught.value.message
        assert TOKEN not in caught.value.message
        import io

        assert export_jsonl(service.store, io.StringIO()) == 0
    finally:
        service.close()
