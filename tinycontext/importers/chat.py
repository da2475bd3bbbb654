"""What the chat exports (ChatGPT, Claude) share: session names and the item of a message."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .items import ImportItem, Skipped, SourceError
from .jsonstream import records, source

Conversation = Callable[[dict[str, Any], str, str, bool], Iterator[ImportItem | Skipped]]


def read_conversations(
    path: Path, conversation: Conversation, include_assistant: bool
) -> Iterator[ImportItem | Skipped]:
    """Each conversation of a conversations.json (or an export zip holding one), read by
    `conversation(data, json_path, file_label, include_assistant)`."""
    opener, label = source(path, "conversations.json")
    for where, data in records(opener, label, "conversations"):
        yield from conversation(data, where, label, include_assistant)


def session_name(title: object, conversation_id: str) -> str:
    """The conversation's title plus the start of its id (titles repeat: "New chat")."""
    name = " ".join(str(title).split())[:150] if isinstance(title, str) and title.strip() \
        else "Untitled"
    return f"{name} ({conversation_id[:8]})" if conversation_id else name


def message_item(
    fmt: str, text: str, notes: list[str], spot: str, source_id: str, when: str | None,
    session: str, role: str, conversation: str, no_time: Callable[[], SourceError],
) -> ImportItem | Skipped:
    """A message's memory: its text with attachments noted after it; a message with nothing
    but attachments (whose bytes the export does not hold) is skipped. A message with text
    but no time is an error (`no_time`)."""
    if not text.strip():
        return Skipped("attachments only (their content is not in the export)" if notes
                       else "empty message", spot)
    if when is None:
        raise no_time()
    if notes:
        text += "\n" + " ".join(dict.fromkeys(notes))
    return ImportItem(
        source_id=source_id, content=text, created_at=when, session_id=session, role=role,
        metadata={"imported_from": fmt, "role": role, "conversation": conversation},
    )
