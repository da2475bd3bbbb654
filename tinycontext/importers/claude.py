"""Claude.ai's data export: conversations.json (alone or in the export's zip), a JSON array
of conversations, each with `chat_messages` (sender `human` or `assistant`).

Messages are in order. Where they carry `parent_message_uuid` (edited prompts and retried
answers are branches), only the branch that ends at the conversation's last message is
kept. Text comes from the message's `text` blocks (`content`), else its `text`; tool use,
tool results and thinking blocks are left out. Attached files are noted by name
("[attached file: NAME]"); their extracted text is not imported.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .chat import message_item, read_conversations, session_name
from .items import ImportItem, Skipped, SourceError, parse_when

FORMAT = "claude"
_ROLES = {"human": "user", "user": "user", "assistant": "assistant"}


def read(path: Path, include_assistant: bool) -> Iterator[ImportItem | Skipped]:
    return read_conversations(path, _conversation, include_assistant)


def _conversation(
    data: dict[str, Any], where: str, label: str, include_assistant: bool
) -> Iterator[ImportItem | Skipped]:
    cid = data.get("uuid")
    messages = data.get("chat_messages")
    if not isinstance(cid, str) or not cid:
        raise SourceError(label, f"{where}.uuid", "expected the conversation's uuid (text)")
    if not isinstance(messages, list):
        raise SourceError(label, f"{where}.chat_messages", "expected a list of messages")
    if not messages:
        yield Skipped("empty conversation", where)
        return
    session = session_name(data.get("name"), cid)
    fallback = parse_when(data.get("created_at"))
    for index in _kept(messages, f"{where}.chat_messages", label):
        spot = f"{where}.chat_messages[{index}]"
        item = _message(messages[index], spot, label, cid, session, fallback,
                        include_assistant)
        if item is not None:
            yield item


def _kept(messages: list[Any], where: str, label: str) -> list[int]:
    """Indices of the messages on the kept branch, in order."""
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise SourceError(label, f"{where}[{i}]", "expected a message object")
    by_id = {m.get("uuid"): i for i, m in enumerate(messages) if isinstance(m.get("uuid"), str)}
    if not any("parent_message_uuid" in m for m in messages):
        return list(range(len(messages)))
    path: list[int] = []
    index: int | None = len(messages) - 1
    while index is not None and index not in path:
        path.append(index)
        parent = messages[index].get("parent_message_uuid")
        index = by_id.get(parent) if isinstance(parent, str) else None
    path.reverse()
    return path


def _message(
    message: dict[str, Any], spot: str, label: str, cid: str, session: str,
    fallback: str | None, include_assistant: bool,
) -> ImportItem | Skipped | None:
    role = _ROLES.get(str(message.get("sender")))
    if role is None:
        return Skipped(f"{message.get('sender')} message", spot)
    if role == "assistant" and not include_assistant:
        return Skipped("assistant message (use --include-assistant)", spot)
    text = _text(message, spot, label)
    notes = [
        f"[attached file: {f.get('file_name')}]"
        for key in ("attachments", "files") for f in message.get(key) or []
        if isinstance(f, dict) and isinstance(f.get("file_name"), str) and f.get("file_name")
    ]
    when = parse_when(message.get("created_at")) or fallback
    mid = message.get("uuid") if isinstance(message.get("uuid"), str) else spot
    return message_item(
        FORMAT, text, notes, spot, f"{cid}/{mid}", when, session, role, cid,
        lambda: SourceError(label, f"{spot}.created_at", "expected an ISO-8601 time"))


def _text(message: dict[str, Any], spot: str, label: str) -> str:
    blocks = message.get("content")
    if isinstance(blocks, list) and blocks:
        texts = [b.get("text") for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
        if any(not isinstance(t, str) for t in texts):
            raise SourceError(label, f"{spot}.content", "expected text blocks with a text string")
        return "\n\n".join(t for t in texts if isinstance(t, str) and t.strip())
    text = message.get("text", "")
    if not isinstance(text, str):
        raise SourceError(label, f"{spot}.text", "expected the message text (a string)")
    return text
