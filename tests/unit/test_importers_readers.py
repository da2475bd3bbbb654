"""The importers' readers on synthetic fixtures in each tool's real export shape."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import pytest

from tinycontext.importers import chatgpt, claude, markdown, mcp_memory, mcp_memory_service, mem0
from tinycontext.importers.items import ImportItem, Skipped, SourceError

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "importers"


def _items(found: list[ImportItem | Skipped]) -> list[ImportItem]:
    return [f for f in found if isinstance(f, ImportItem)]


def _reasons(found: list[ImportItem | Skipped]) -> set[str]:
    return {f.reason for f in found if isinstance(f, Skipped)}


def test_chatgpt_follows_the_kept_branch_and_skips_what_is_not_the_users() -> None:
    found = list(chatgpt.read(FIXTURES / "chatgpt_conversations.json", False))
    items = _items(found)
    texts = [i.content for i in items]
    assert texts[0] == "I am planning a trip to Lisbon in October with my sister Ana."
    # The edited-away branch (u2-old) is not the one current_node leads to.
    assert not any("five days" in t for t in texts)
    assert texts[1].startswith("We will stay seven days")
    assert "[attached image]" in texts[1] and "[attached file: booking.pdf]" in texts[1]
    assert [i.created_at for i in items[:2]] == ["2024-06-01T10:00:10Z", "2024-06-01T10:03:20Z"]
    assert items[0].session_id == "Trip planning (6f1c2a9e)"
    assert items[2].session_id == "Café ☕ naming — ideas (6f1c2a9e)"
    assert _reasons(found) >= {"system message", "hidden message", "tool message",
                               "assistant message (use --include-assistant)",
                               "empty conversation",
                               "attachments only (their content is not in the export)"}
    assert len({i.source_id for i in items}) == len(items)


def test_chatgpt_assistant_messages_only_when_asked() -> None:
    items = _items(list(chatgpt.read(FIXTURES / "chatgpt_conversations.json", True)))
    assert [i.role for i in items[:3]] == ["user", "assistant", "user"]
    assert items[1].content == "October is a good month for Lisbon."


def test_chatgpt_zip_is_read_in_place(tmp_path: Path) -> None:
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr("chat.html", "<html></html>")
        out.write(FIXTURES / "chatgpt_conversations.json", "conversations.json")
    from_zip = _items(list(chatgpt.read(archive, False)))
    plain = _items(list(chatgpt.read(FIXTURES / "chatgpt_conversations.json", False)))
    assert from_zip == plain


def test_claude_messages_in_order_with_attachments_noted() -> None:
    found = list(claude.read(FIXTURES / "claude_conversations.json", False))
    items = _items(found)
    assert [i.content.splitlines()[0] for i in items] == [
        "I water the tomatoes every morning at 7.", "Here is the plan for the beds."]
    assert "[attached file: beds.txt] [attached file: photo.png]" in items[1].content
    assert items[0].created_at == "2024-05-02T08:00:05Z"
    assert items[0].session_id == "Garden watering schedule (c0a1b2c3)"
    assert "empty conversation" in _reasons(found)
    with_assistant = _items(list(claude.read(FIXTURES / "claude_conversations.json", True)))
    assert with_assistant[1].content == "That works well in spring."


def test_claude_branches_keep_the_last_messages_path(tmp_path: Path) -> None:
    def message(uuid: str, parent: str, text: str) -> dict[str, object]:
        return {"uuid": uuid, "parent_message_uuid": parent, "sender": "human", "text": text,
                "created_at": "2024-01-01T00:00:00Z", "content": []}

    data = [{"uuid": "conv-1", "name": "Branches", "chat_messages": [
        message("a", "00000000-0000-4000-8000-000000000000", "first"),
        message("b", "a", "edited away"), message("c", "a", "kept edit")]}]
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(data))
    assert [i.content for i in _items(list(claude.read(path, False)))] == ["first", "kept edit"]


def test_mcp_memory_graph_observations_and_relations() -> None:
    found = list(mcp_memory.read(FIXTURES / "memory.jsonl", False))
    items = _items(found)
    assert [i.content for i in items] == [
        "Ana_Silva (person): Prefers tea over coffee",
        "Ana_Silva (person): Works as a marine biologist in Faro",
        "Ana_Silva works at Faro_Lab",
        "Project Tide (project): Started in March 2024",
    ]
    assert items[0].tags == ("ana_silva", "person")
    assert items[2].tags == ("ana_silva", "faro_lab")
    assert items[3].tags == ("project-tide", "project")
    assert "entity without observations" in _reasons(found)


def test_mem0_categories_users_and_metadata() -> None:
    items = _items(list(mem0.read(FIXTURES / "mem0_export.json", False)))
    assert [i.content for i in items] == ["Prefers vegetarian food", "Is allergic to peanuts"]
    assert items[0].tags == ("food", "preferences", "user:alex")
    assert items[0].created_at == "2024-07-20T17:15:00Z"  # -07:00 read as UTC
    assert items[0].metadata == {"source": "chat", "confidence": 0.9, "user_id": "alex",
                                 "imported_from": "mem0"}
    assert items[1].session_id == "onboarding-1" and "agent:diet-bot" in items[1].tags


def test_mem0_json_lines_and_a_plain_list(tmp_path: Path) -> None:
    records = json.loads((FIXTURES / "mem0_export.json").read_text())["results"]
    lines = tmp_path / "mem0.jsonl"
    lines.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    plain = tmp_path / "mem0.json"
    plain.write_text(json.dumps(records))
    expected = _items(list(mem0.read(FIXTURES / "mem0_export.json", False)))
    assert [i.content for i in _items(list(mem0.read(lines, False)))] == \
        [i.content for i in expected]
    assert [i.content for i in _items(list(mem0.read(plain, False)))] == \
        [i.content for i in expected]


def test_mcp_memory_service_tags_types_and_times() -> None:
    items = _items(list(mcp_memory_service.read(FIXTURES / "mcp_memory_service_export.json",
                                                False)))
    assert items[0].tags == ("decision", "billing", "type:decision")
    assert items[0].metadata == {"project": "billing", "priority": 2,
                                 "imported_from": "mcp-memory-service"}
    assert items[0].created_at == "2024-09-01T10:00:00Z"
    assert items[1].tags == ("meetings", "schedule", "type:note")
    assert items[0].source_id.startswith("3f2a")


def test_markdown_sections_tags_sessions_and_rule_files() -> None:
    found = list(markdown.read(FIXTURES / "notes", False))
    items = _items(found)
    notes = [i for i in items if i.kind == "episodic"]
    rules = [i.content for i in items if i.kind == "profile"]
    garden = [i for i in notes if i.session_id == "projects/garden.md"]
    assert garden[0].content == "Garden\n\nThe garden has three raised beds. #outdoors"
    assert garden[0].tags == ("gardening", "home", "outdoors")
    assert garden[0].created_at == "2024-04-01T00:00:00Z"
    assert garden[1].content.startswith("Garden > Watering\n\nWater the tomatoes")
    assert "notatag" not in garden[1].tags and "```bash" in garden[1].content
    ideas = next(i for i in notes if i.session_id == "ideas.md")
    assert ideas.tags == ("reading", "projects/side")
    assert "Use uv for Python environments." in rules
    assert "Run the tests with:\n\n```\npytest -q\n```" in rules
    assert "Style: Keep modules under 300 lines." in rules
    assert "Type-annotate every function." in rules  # .cursor/rules/*.mdc, front matter out
    assert not any("ignored" in i.content for i in items)  # .obsidian is not read
    assert all(i.session_id is None for i in items if i.kind == "profile")


def test_markdown_non_utf8_name_and_content(tmp_path: Path) -> None:
    name = os.fsdecode(b"caf\xe9.md")
    (tmp_path / name).write_bytes(b"Notas de caf\xe9: torra m\xe9dia.\n")
    items = _items(list(markdown.read(tmp_path, False)))
    assert items[0].session_id == "caf\ufffd.md"
    assert items[0].content == "Notas de caf\ufffd: torra m\ufffddia."
    items[0].session_id.encode("utf-8")  # storable text


def test_truncated_file_names_file_and_record(tmp_path: Path) -> None:
    whole = (FIXTURES / "chatgpt_conversations.json").read_bytes()
    cut = tmp_path / "conversations.json"
    cut.write_bytes(whole[: len(whole) - 200])
    with pytest.raises(SourceError) as caught:
        list(chatgpt.read(cut, False))
    message = caught.value.message
    assert str(cut) in message and "[2]" in message and "truncated" in message
    assert caught.value.code == "invalid_request"


@pytest.mark.parametrize(("content", "where", "expected"), [
    ('{"a": 1}', "the first character", "JSON array"),
    ('[1]', "[0]", "expected an object"),
    ('[{"id": "x", "mapping": []}]', "[0].mapping", "object of message nodes"),
    ('[{"mapping": {}}]', "[0].id", "conversation's id"),
])
def test_malformed_chatgpt_records(tmp_path: Path, content: str, where: str,
                                   expected: str) -> None:
    path = tmp_path / "conversations.json"
    path.write_text(content)
    with pytest.raises(SourceError) as caught:
        list(chatgpt.read(path, False))
    assert where in caught.value.message and expected in caught.value.message


def test_bad_json_line_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "memory.jsonl"
    path.write_text('{"type":"entity","name":"A","entityType":"t","observations":["x"]}\n'
                    '{"type":"relation","from":"A"\n')
    with pytest.raises(SourceError) as caught:
        list(mcp_memory.read(path, False))
    assert "line 2" in caught.value.message
    path.write_text('{"type":"relation","from":"A","to":"","relationType":"knows"}\n')
    with pytest.raises(SourceError) as caught:
        list(mcp_memory.read(path, False))
    assert "line 1.to" in caught.value.message


def test_metadata_is_flat_clean_and_fits_the_store_limit() -> None:
    from tinycontext.importers.items import fit_metadata, flat_metadata

    raw = {f"key{i}": "v" * 200 for i in range(20)} | {"bad\x00key": "a\x07b", "n": float("nan")}
    flat = flat_metadata(raw, limit=30)
    assert flat["badkey"] == "a b" and "n" not in flat
    assert all(len(str(v)) <= 120 for v in flat.values())
    fitted = fit_metadata(flat | {"imported_from": "mem0"})
    assert len(json.dumps(fitted).encode()) <= 1024
    assert fitted["imported_from"] == "mem0" and "key0" in fitted
