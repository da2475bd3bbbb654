"""`tinycontext import --from FORMAT` as a subprocess on a real store with the default model:
dry run, import, re-import, export round trip, a malformed file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.servers import run_cli

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "importers"
CASES = {"chatgpt": ("chatgpt_conversations.json", 3), "claude": ("claude_conversations.json", 2),
         "mcp-memory": ("memory.jsonl", 4), "mem0": ("mem0_export.json", 2),
         "mcp-memory-service": ("mcp_memory_service_export.json", 2), "markdown": ("notes", 8)}


def _exported(tmp_path: Path, **env: str) -> list[dict[str, object]]:
    done = run_cli(tmp_path, "export", **env)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


@pytest.mark.parametrize("fmt", list(CASES))
def test_import_each_format(tmp_path: Path, fmt: str) -> None:
    name, count = CASES[fmt]
    source = FIXTURES / name
    dry = run_cli(tmp_path, "import", "--from", fmt, str(source), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "nothing was changed" in dry.stdout and f"Would import {count} memories" in dry.stdout
    assert _exported(tmp_path) == []
    done = run_cli(tmp_path, "import", "--from", fmt, str(source), "--tags", "imported")
    assert done.returncode == 0, done.stderr
    assert f"{count} imported, 0 already imported" in done.stderr
    assert "Traceback" not in done.stderr
    again = run_cli(tmp_path, "import", "--from", fmt, str(source), "--json")
    assert again.returncode == 0, again.stderr
    summary = json.loads(again.stdout)
    assert summary["imported"] == 0 and summary["already_imported"] == count
    exported = _exported(tmp_path)
    assert len(exported) == count
    assert all("imported" in m["tags"] for m in exported)  # type: ignore[operator]
    assert all(m["metadata"]["imported_from"] == fmt  # type: ignore[index]
               for m in exported)


def test_chatgpt_times_and_round_trip(tmp_path: Path) -> None:
    source = FIXTURES / "chatgpt_conversations.json"
    assert run_cli(tmp_path, "import", "--from", "chatgpt", str(source)).returncode == 0
    first = _exported(tmp_path)
    assert [m["created_at"] for m in first] == ["2024-06-01T10:00:10Z", "2024-06-01T10:03:20Z",
                                                "2024-06-03T07:34:10Z"]
    assert "[redacted:" in str(first[2]["content"])
    export = tmp_path / "export.jsonl"
    export.write_text("".join(json.dumps(m) + "\n" for m in first))
    other = {"TINYCONTEXT_MEMORY_DB_PATH": str(tmp_path / "other" / "memories.db")}
    loaded = run_cli(tmp_path, "import", str(export), **other)
    assert loaded.returncode == 0 and "3 imported" in loaded.stderr, loaded.stderr
    assert _exported(tmp_path, **other) == first


def test_malformed_export_stores_nothing(tmp_path: Path) -> None:
    whole = (FIXTURES / "chatgpt_conversations.json").read_bytes()
    cut = tmp_path / "conversations.json"
    cut.write_bytes(whole[:-200])
    done = run_cli(tmp_path, "import", "--from", "chatgpt", str(cut))
    assert done.returncode == 1
    assert str(cut) in done.stderr and "[2]" in done.stderr and "Traceback" not in done.stderr
    assert _exported(tmp_path) == []
    wrong = run_cli(tmp_path, "import", str(FIXTURES / "memory.jsonl"), "--session", "x")
    assert wrong.returncode == 2 and "--from" in wrong.stderr


@pytest.mark.parametrize("fmt", ["tinycontext", "chatgpt", "markdown"])
def test_a_path_that_does_not_exist_says_what_to_give(tmp_path: Path, fmt: str) -> None:
    missing = tmp_path / "exports" / "conversations.json"
    done = run_cli(tmp_path, "import", "--from", fmt, str(missing))
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"tinycontext import: {missing} does not exist")
    assert "--help" in done.stderr and "Errno" not in done.stderr
    assert not any(p.suffix == ".db" for p in tmp_path.rglob("*"))  # no store was made


def test_stdin_is_read_for_every_format_but_markdown(tmp_path: Path) -> None:
    source = FIXTURES / "chatgpt_conversations.json"
    done = run_cli(tmp_path, "import", "--from", "chatgpt", "-", "--json",
                   stdin=source.read_text(encoding="utf-8"))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["imported"] == 3 and len(_exported(tmp_path)) == 3
    notes = run_cli(tmp_path, "import", "--from", "markdown", "-", stdin="# a note\n")
    assert notes.returncode == 1 and "folder" in notes.stderr and "Traceback" not in notes.stderr


def test_python_api_import_memories(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = f"""
import json
from tinycontext import TinyContextConfig, import_memories, list_memories
config = TinyContextConfig(memory_db_path={str(tmp_path / 'api.db')!r},
                           models_dir={str(tmp_path / 'models')!r})
path = {str(FIXTURES / 'mem0_export.json')!r}
dry = import_memories(path, "mem0", dry_run=True, config=config)
done = import_memories(path, "mem0", tags=["from-mem0"], config=config)
again = import_memories(path, "mem0", config=config)
print(json.dumps([dry["new"], done["imported"], again["already_imported"],
                  list_memories(config=config)["total_count"]]))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.splitlines()[-1]) == [2, 2, 2, 2]
