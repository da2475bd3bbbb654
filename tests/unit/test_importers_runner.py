"""Running an import over the fakes: idempotence, dry run, times, redaction, dedup, errors,
interrupted imports, fuzzed inputs."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from tinycontext.domain.errors import TinyContextError
from tinycontext.importers.importing import import_file
from tinycontext.importers.report import ImportOptions

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "importers"
CASES = [("chatgpt", "chatgpt_conversations.json"), ("claude", "claude_conversations.json"),
         ("mcp-memory", "memory.jsonl"), ("mem0", "mem0_export.json"),
         ("mcp-memory-service", "mcp_memory_service_export.json"), ("markdown", "notes")]


def _all(svc: Any) -> list[dict[str, Any]]:
    return [m for memory, _ in svc.export_records() for m in [{
        "id": memory.id, "content": memory.content, "kind": memory.kind,
        "session_id": memory.session_id, "created_at": memory.created_at}]]


def _conversation(cid: str, texts: list[str], start: float = 1_700_000_000.0,
                  title: str = "Chat") -> dict[str, Any]:
    mapping: dict[str, Any] = {"root": {"id": "root", "message": None, "parent": None,
                                        "children": ["n0"] if texts else []}}
    for i, text in enumerate(texts):
        mapping[f"n{i}"] = {
            "id": f"n{i}", "parent": "root" if i == 0 else f"n{i - 1}",
            "children": [f"n{i + 1}"] if i + 1 < len(texts) else [],
            "message": {"id": f"m{i}", "author": {"role": "user"}, "create_time": start + 60 * i,
                        "content": {"content_type": "text", "parts": [text]}, "metadata": {}}}
    return {"id": cid, "title": title, "create_time": start, "mapping": mapping,
            "current_node": f"n{len(texts) - 1}" if texts else "root"}


def _write(tmp_path: Path, conversations: list[dict[str, Any]]) -> Path:
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(conversations))
    return path


@pytest.mark.parametrize(("fmt", "name"), CASES)
def test_dry_run_changes_nothing_and_a_second_import_adds_nothing(svc: Any, fmt: str,
                                                                   name: str) -> None:
    dry = import_file(svc, fmt, FIXTURES / name, ImportOptions(dry_run=True)).to_dict()
    assert dry["new"] > 0 and _all(svc) == []
    first = import_file(svc, fmt, FIXTURES / name).to_dict()
    assert first["imported"] + first["skipped_duplicates"] == dry["new"]
    stored = _all(svc)
    assert len(stored) == first["imported"]
    again = import_file(svc, fmt, FIXTURES / name).to_dict()
    assert again["imported"] == 0 and again["already_imported"] == first["imported"]
    assert _all(svc) == stored
    dry_again = import_file(svc, fmt, FIXTURES / name, ImportOptions(dry_run=True)).to_dict()
    assert dry_again["new"] == first["skipped_duplicates"]


def test_times_order_sessions_and_tags_kept(svc: Any, tmp_path: Path) -> None:
    path = _write(tmp_path, [_conversation("c-1", ["Alpha launches in May.",
                                                   "Beta needs a new logo.",
                                                   "Gamma moved to Oslo."])])
    options = ImportOptions(session_id="imported", tags=("From-ChatGPT", "2024"))
    summary = import_file(svc, "chatgpt", path, options).to_dict()
    assert summary["imported"] == 3 and summary["tags"] == {"from-chatgpt": 3, "2024": 3}
    stored = _all(svc)
    assert [m["content"] for m in stored] == ["Alpha launches in May.", "Beta needs a new logo.",
                                              "Gamma moved to Oslo."]
    assert [m["created_at"] for m in stored] == ["2023-11-14T22:13:20Z", "2023-11-14T22:14:20Z",
                                                 "2023-11-14T22:15:20Z"]
    assert {m["session_id"] for m in stored} == {"imported"}
    recent = svc.recall(session_id="imported").to_dict()["memories"]
    assert recent[0]["content"] == "Gamma moved to Oslo."
    detail = svc.detail(stored[0]["id"]).to_dict()
    assert detail["tags"] == ["from-chatgpt", "2024"]
    assert detail["metadata"] == {"imported_from": "chatgpt", "role": "user",
                                  "conversation": "c-1"}
    tagged = svc.list_page(tags=["from-chatgpt"]).to_dict()
    assert tagged["total_count"] == 3


def test_secrets_are_redacted_and_invisible_content_dropped(svc: Any, tmp_path: Path) -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    path = _write(tmp_path, [_conversation("c-2", [f"My token is {token} for CI.",
                                                   "\u200b\u200b\ufeff", "Real text."])])
    summary = import_file(svc, "chatgpt", path).to_dict()
    contents = [m["content"] for m in _all(svc)]
    assert token not in " ".join(contents) and "[redacted:github-token]" in contents[0]
    assert summary["redacted"] == 1 and summary["imported"] == 2
    assert any(s["reason"].startswith("blank once invisible") for s in summary["skipped"])


def test_near_duplicates_are_skipped_as_on_save(svc: Any, tmp_path: Path) -> None:
    path = _write(tmp_path, [_conversation("c-3", ["The office wifi is slow.",
                                                   "The office wifi is slow."]),
                             _conversation("c-4", ["The office wifi is slow."],
                                           title="Other")])
    summary = import_file(svc, "chatgpt", path).to_dict()
    assert summary["imported"] == 2 and summary["skipped_duplicates"] == 1
    again = import_file(svc, "chatgpt", path).to_dict()
    assert again["imported"] == 0 and len(_all(svc)) == 2


def test_long_message_is_split_under_the_limit(make: Any, tmp_path: Path) -> None:
    svc = make(max_memory_tokens=200)
    paragraphs = [" ".join(f"p{i}w{j}" for j in range(50)) for i in range(8)]
    path = _write(tmp_path, [_conversation("c-5", ["\n\n".join(paragraphs)])])
    summary = import_file(svc, "chatgpt", path).to_dict()
    stored = _all(svc)
    assert summary["split_messages"] == 1 and len(stored) == 4
    assert "\n\n".join(m["content"] for m in stored) == "\n\n".join(paragraphs)
    assert import_file(svc, "chatgpt", path).to_dict()["imported"] == 0


def test_interrupted_import_is_finished_by_running_it_again(make: Any, store: Any,
                                                            tmp_path: Path) -> None:
    svc = make()
    conversations = [_conversation(f"c-{i}", [f"Fact {i}-{j}: value {i * 10 + j}."
                                             for j in range(5)], title=f"Chat {i}")
                     for i in range(6)]
    path = _write(tmp_path, conversations)
    real_add, calls = store.add, [0]

    def failing_add(items: Any) -> None:
        calls[0] += 1
        if calls[0] == 3:
            raise OSError("disk went away")
        real_add(items)

    store.add = failing_add
    with pytest.raises(OSError):
        import_file(svc, "chatgpt", path, ImportOptions(batch_size=4))
    partial = _all(svc)
    assert 0 < len(partial) < 30
    store.add = real_add
    summary = import_file(svc, "chatgpt", path, ImportOptions(batch_size=4)).to_dict()
    assert summary["already_imported"] == len(partial)
    stored = _all(svc)
    assert len(stored) == 30 and len({m["id"] for m in stored}) == 30


def test_unknown_format_and_missing_path(svc: Any, tmp_path: Path) -> None:
    with pytest.raises(TinyContextError, match="Unknown import format"):
        import_file(svc, "evernote", tmp_path)
    with pytest.raises(TinyContextError, match="none exists"):
        import_file(svc, "chatgpt", tmp_path / "nope.json")
    with pytest.raises(TinyContextError, match="found a folder"):
        import_file(svc, "mem0", tmp_path)


@pytest.mark.parametrize(("fmt", "name"), CASES[:5])
def test_fuzzed_inputs_never_crash_or_half_write(make: Any, fmt: str, name: str,
                                                 tmp_path: Path) -> None:
    whole = (FIXTURES / name).read_bytes()
    rng = random.Random(f"{fmt}-fuzz")
    for round_ in range(40):
        data = bytearray(whole)
        if round_ % 2:
            data = data[: rng.randrange(len(data))]
        else:
            for _ in range(rng.randrange(1, 6)):
                data[rng.randrange(len(data))] = rng.randrange(256)
        path = tmp_path / f"{round_}-{name}"
        path.write_bytes(bytes(data))
        svc = make()
        before = _all(svc)
        try:
            import_file(svc, fmt, path)
        except TinyContextError as exc:
            assert exc.code == "invalid_request" and str(path) in exc.message
            assert _all(svc) == before  # a malformed file stores nothing
        for memory in _all(svc):
            svc.delete(memory["id"])


def test_ten_megabyte_message_is_read_and_split(make: Any, tmp_path: Path) -> None:
    from tinycontext.importers.report import ImportSummary
    from tinycontext.importers.runner import pieces

    svc = make(max_memory_tokens=8000)
    sentence = "The harbour crane number {} lifts containers at dawn."
    text = " ".join(sentence.format(i) for i in range(200_000))
    assert len(text) > 10_000_000
    path = _write(tmp_path, [_conversation("c-10mb", [text, "A short one after it."])])
    summary = ImportSummary(fmt="chatgpt")
    found = [item for _, item in pieces(svc.core, "chatgpt", path, ImportOptions(), summary)]
    assert summary.split == 1 and len(found) > 100
    assert found[-1].content == "A short one after it."
    assert " ".join(i.content for i in found[:-1]) == text
    assert all(svc.core.tokenizer.count(i.content) <= 8000 for i in found)
    assert len({i.source_id for i in found}) == len(found)
    assert len({i.created_at for i in found[:-1]}) == 1


def test_reading_an_export_holds_one_conversation_at_a_time(tmp_path: Path) -> None:
    import tracemalloc

    from tinycontext.importers import chatgpt

    path = tmp_path / "conversations.json"
    with open(path, "w", encoding="utf-8") as out:
        out.write("[")
        for i in range(2000):
            texts = [f"Message {j} of chat {i}: " + "lorem ipsum " * 20 for j in range(12)]
            out.write(("," if i else "") + json.dumps(_conversation(f"c-{i}", texts)))
        out.write("]")
    assert path.stat().st_size > 10_000_000
    tracemalloc.start()
    count = sum(1 for _ in chatgpt.read(path, False))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert count == 24_000
    assert peak < 2_000_000  # a conversation is ~5 KB; the file is over 10 MB
