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
