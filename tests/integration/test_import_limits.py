"""Import applies the content rules of save (issue 13 items 7 and 8): control characters are
removed, invisible-only content and content over max_memory_tokens are refused with the line
number before anything is stored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fakes import FixedClock, HashEmbedder, WordTokenizer
from tinycontext.adapters.sqlite.store import SqliteStore
from tinycontext.app.service import MemoryService
from tinycontext.app.transfer import import_jsonl
from tinycontext.config.engine import TinyContextConfig
from tinycontext.domain.records import ImportFormatError
from tinycontext.entry.container import build_service


def _service(db: Path, **config: Any) -> MemoryService:
    return build_service(TinyContextConfig(memory_db_path=str(db), **config),
                         store=SqliteStore(db), embedder=HashEmbedder(),
                         tokenizer=WordTokenizer(), clock=FixedClock(), background=False)


def _line(number: int, content: str) -> str:
    return json.dumps({"id": f"{number:08x}-0000-4000-8000-000000000000", "kind": "episodic",
                       "content": content, "created_at": "2026-07-31T10:15:00Z"})


def test_import_removes_control_characters_like_save(tmp_path: Path) -> None:
    service = _service(tmp_path / "m.db")
    report = import_jsonl(service, [_line(1, "\ufeffThe build\u0000 uses Make.\u000cDone.")])
    assert report.imported == 1
    [entry] = service.list_page().to_dict()["memories"]
    assert entry["content"] == "The build uses Make.\nDone."
    service.close()


@pytest.mark.parametrize(("content", "words"), [
    ("\u200b\u0000\ufeff", "nothing visible"),
    (" ".join(["word"] * 21), "21 tokens, over the limit of 20 tokens per memory"),
    ("x" * 700, "700 characters (more than 640)"),
])
def test_import_refuses_invisible_or_too_large_content_with_its_line(
    tmp_path: Path, content: str, words: str
) -> None:
    service = _service(tmp_path / "m.db", max_memory_tokens=20)
    lines = [_line(1, "A fine memory."), _line(2, content), _line(3, "Another one.")]
    with pytest.raises(ImportFormatError) as info:
        import_jsonl(service, lines)
    assert info.value.line == 2 and words in info.value.message
    assert info.value.message.startswith("line 2: ")
    assert service.list_page().to_dict()["total_count"] == 0  # nothing stored
    if "tokens" in words or "characters" in words:
        assert "raise max_memory_tokens for this import" in info.value.message
    service.close()
