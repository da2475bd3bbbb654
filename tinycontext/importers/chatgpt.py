"""ChatGPT's data export: the zip (or its conversations.json), one JSON array of conversations.

Each conversation holds its messages as a tree (`mapping`: node id -> {message, parent,
children}); edits and regenerations are sibling branches. The branch the user kept is the
path from `current_node` up to the root, read here in that order and reversed. Only user
messages are imported (assistant ones with include_assistant); system, tool and hidden
messages (custom instructions, memory updates) are skipped. An attached image or file is
noted in the text as "[attached image]" / "[attached file: NAME]"; a message with nothing
but attachments is skipped (its bytes are not in conversations.json).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .chat import message_item, read_conversations, session_name
from .items import ImportItem, Skipped, SourceError, parse_when

FORMAT = "chatgpt"
_TEXT_TYPES = {"text", "multimodal_text"}


def read(path: Path, include_assistant: bool) -> Iterator[ImportItem | Skipped]:
    return read_conversations(path, _conversation, include_assistant)


def _conversation(
    data: dict[str, Any], where: str, label: str, include_assistant: bool
) -> Iterator[ImportItem | Skipped]:
    cid = data.get("conversation_id") or data.get("id")
    mapping = data.get("mapping")
    if not isinstance(cid, str) or not cid:
        raise SourceError(label, f"{where}.id", "expected the conversation's id (text)")
    if not isinstance(mapping, dict):
        raise SourceError(label, f"{where}.mapping", "expected an object of message nodes")
    session = session_name(data.get("title"), cid)
    fallback = parse_when(data.get("create_time")) or parse_when(data.get("update_time"))
    path = _kept_branch(mapping, data.get("current_node"), f"{where}.mapping", label)
    if not path:
        yield Skipped("empty conversation", where)
        return
    for node_id in path:
        node = mapping[node_id]
        message = node.get("message") if isinstance(node, dict) else None
        if message is None:
            continue  # the root node carries no message
        spot = f"{where}.mapping[{node_id!r}].message"
        if not isinstance(message, dict):
            raise SourceError(label, spot, "expected a message object or null")
        item = _message(message, spot, label, cid, node_id, session, fallback,
                        include_assistant)
        if item is not None:
            yield item


def _kept_branch(
    mapping: dict[str, Any], current: object, where: str, label: str
) -> list[str]:
    """Node ids from the root to `current_node` (the branch the user last saw)."""
    if not mapping:
        return []
    if not isinstance(current, str) or current not in mapping:
        # Old exports may lack current_node: follow the last child from the root instead.
        roots = [k for k, v in mapping.items() if isinstance(v, dict) and not v.get("parent")]
        if not roots:
            raise SourceError(label, where, "expected a root node (one without a parent)")
        path: list[str] = []
        step: object = roots[0]
        while isinstance(step, str) and step in mapping and step not in path:
            path.append(step)
            children = mapping[step].get("children") or []
            step = children[-1] if isinstance(children, list) and children else None
        return path
    path = []
    node: object = current
    while isinstance(node, str) and node in mapping:
        if node in path:
            raise SourceError(label, f"{where}[{node!r}].parent", "expected a tree, found a loop")
        path.append(node)
        entry = mapping[node]
        if not isinstance(entry, dict):
            raise SourceError(label, f"{where}[{node!r}]", "expected a node object")
        node = entry.get("parent")
    path.reverse()
    return path


def _message(
    message: dict[str, Any], spot: str, label: str, cid: str, node_id: str, session: str,
    fallback: str | None, include_assistant: bool,
) -> ImportItem | Skipped | None:
    author = message.get("author")
    role = author.get("role") if isinstance(author, dict) else None
    found = message.get("metadata")
    metadata: dict[str, Any] = found if isinstance(found, dict) else {}
    if role not in ("user", "assistant"):
        return Skipped(f"{role or 'unknown'} message", spot)
    if metadata.get("is_visually_hidden_from_conversation"):
        return Skipped("hidden message", spot)
    if role == "assistant" and not include_assistant:
        return Skipped("assistant message (use --include-assistant)", spot)
    content = message.get("content")
    if not isinstance(content, dict):
        raise SourceError(label, f"{spot}.content", "expected an object with content_type")
    kind = content.get("content_type")
    if kind not in _TEXT_TYPES:
        return Skipped(f"{kind} content", spot)
    if role == "assistant" and message.get("recipient", "all") != "all":
        return Skipped("assistant tool call", spot)
    parts = content.get("parts")
    if not isinstance(parts, list):
        raise SourceError(label, f"{spot}.content.parts", "expected a list of text parts")
    texts, notes = [], []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict):
            notes.append("[attached image]" if "image" in str(part.get("content_type"))
                         else "[attached file]")
    for attachment in metadata.get("attachments") or []:
        if isinstance(attachment, dict):
            name = attachment.get("name")
            if isinstance(name, str) and "image" not in str(attachment.get("mime_type")):
                notes.append(f"[attached file: {name}]")
    when = parse_when(message.get("create_time")) or fallback
    text = "\n".join(t for t in texts if t.strip())
    return message_item(
        FORMAT, text, notes, spot, f"{cid}/{message.get('id') or node_id}", when, session,
        role, cid, lambda: SourceError(label, f"{spot}.create_time",
                                       "expected a time (epoch seconds)"))
