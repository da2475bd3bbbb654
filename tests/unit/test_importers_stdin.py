"""Imports read from stdin (`--from FORMAT -`) and sealed exports read by `--from tinycontext`
(dry run and summary included), over the fakes."""

from __future__ import annotations

import io
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tinycontext.domain.errors import InvalidRequestError, TinyContextError
from tinycontext.domain.records import record
from tinycontext.importers.importing import import_file
from tinycontext.importers.report import ImportOptions

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "importers"
STREAMED = [("chatgpt", "chatgpt_conversations.json"), ("claude", "claude_conversations.json"),
            ("mcp-memory", "memory.jsonl"), ("mem0", "mem0_export.json"),
            ("mcp-memory-service", "mcp_memory_service_export.json")]
KEY = "ab" * 32


class _Stdin:
    def __init__(self, data: bytes) -> None:
        self.buffer = io.BufferedReader(io.BytesIO(data))  # type: ignore[arg-type]


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def _feed(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", _Stdin(data))


def _contents(svc: Any) -> list[tuple[str, str, str | None]]:
    return sorted((m.id, m.content, m.session_id) for m, _ in svc.export_records())


@pytest.mark.parametrize(("fmt", "name"), STREAMED)
def test_stdin_imports_what_the_file_imports(make: Any, store: Any, fmt: str, name: str,
                                             monkeypatch: pytest.MonkeyPatch,
                                             private_tmp: Path) -> None:
    svc = make()
    from_file = import_file(svc, fmt, FIXTURES / name).to_dict()
    stored = _contents(svc)
    store.__init__()  # the same service over an empty store
    assert _contents(svc) == []
    _feed(monkeypatch, (FIXTURES / name).read_bytes())
    dry = import_file(svc, fmt, "-", ImportOptions(dry_run=True)).to_dict()
    assert dry["new"] == from_file["imported"] + from_file["skipped_duplicates"]
    assert _contents(svc) == []
    _feed(monkeypatch, (FIXTURES / name).read_bytes())
    assert import_file(svc, fmt, "-").to_dict()["imported"] == from_file["imported"]
    assert _contents(svc) == stored
    assert list(private_tmp.iterdir()) == []  # the spool is gone


def test_stdin_errors_name_stdin_and_store_nothing(svc: Any, monkeypatch: pytest.MonkeyPatch,
                                                   private_tmp: Path) -> None:
    whole = (FIXTURES / "chatgpt_conversations.json").read_bytes()
    _feed(monkeypatch, whole[:-200])
    with pytest.raises(TinyContextError) as caught:
        import_file(svc, "chatgpt", "-")
    assert caught.value.message.startswith("stdin at [2]")
    assert str(private_tmp) not in caught.value.message
    _feed(monkeypatch, b"")
    with pytest.raises(TinyContextError, match="nothing came"):
        import_file(svc, "mem0", "-")
    with pytest.raises(InvalidRequestError, match="folder"):
        import_file(svc, "markdown", "-")
    assert _contents(svc) == [] and list(private_tmp.iterdir()) == []


def _export(svc: Any) -> bytes:
    import_file(svc, "chatgpt", FIXTURES / "chatgpt_conversations.json")
    lines = [json.dumps(record(m, v)) + "\n" for m, v in svc.export_records()]
    return "".join(lines).encode()


def _sealed(plain: bytes) -> bytes:
    from tinycontext.app import sealed

    pytest.importorskip("cryptography")
    out = io.BytesIO()
    writer = sealed.text_writer(out, KEY.encode())
    writer.write(plain.decode())
    writer.close()
    return out.getvalue()


@pytest.mark.parametrize("via_stdin", [False, True])
def test_sealed_export_dry_run_and_import(make: Any, store: Any, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch,
                                          via_stdin: bool) -> None:
    svc = make(encryption_key=KEY)
    plain = _export(svc)
    stored = _contents(svc)
    store.__init__()
    sealed_bytes = _sealed(plain)
    path = tmp_path / "export.sealed"
    path.write_bytes(sealed_bytes)

    def source() -> str:
        if via_stdin:
            _feed(monkeypatch, sealed_bytes)
            return "-"
        return str(path)

    dry = import_file(svc, "tinycontext", source(), ImportOptions(dry_run=True)).to_dict()
    assert dry["new"] == len(stored) and _contents(svc) == []
    done = import_file(svc, "tinycontext", source()).to_dict()
    assert done["imported"] == len(stored) and _contents(svc) == stored
    again = import_file(svc, "tinycontext", source(), ImportOptions(dry_run=True)).to_dict()
    assert again["new"] == 0 and again["already_imported"] == len(stored)


def test_sealed_export_without_the_key_is_refused(make: Any, store: Any, tmp_path: Path) -> None:
    svc = make()
    sealed_bytes = _sealed(_export(svc))
    store.__init__()
    path = tmp_path / "export.sealed"
    path.write_bytes(sealed_bytes)
    for dry_run in (True, False):
        with pytest.raises(InvalidRequestError, match="encrypted export: configure the key"):
            import_file(svc, "tinycontext", path, ImportOptions(dry_run=dry_run))
    assert _contents(svc) == []


def test_plain_export_from_stdin_dry_run(make: Any, store: Any,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    svc = make()
    plain = _export(svc)
    count = len(_contents(svc))
    store.__init__()
    _feed(monkeypatch, plain)
    dry = import_file(svc, "tinycontext", "-", ImportOptions(dry_run=True)).to_dict()
    assert dry["new"] == count and _contents(svc) == []
