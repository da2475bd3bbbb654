"""The ChatGPT exports (conversations.json: a mapping tree of user messages per conversation)
that benchmark_import.py imports: synthetic ones of N messages, and one built from LoCoMo's
conversations (each turn dated at its session's date, a second apart to keep their order)."""

from __future__ import annotations

import json
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from benchmarks.datasets import LocomoConversation

PER_CONVERSATION = 50


def _write_conversation(out: IO[str], cid: str, title: str,
                        turns: list[tuple[str, str, float]], first: bool) -> None:
    """One ChatGPT conversation (mapping tree, current_node) of user messages."""
    mapping: dict[str, Any] = {"root": {"id": "root", "message": None, "parent": None,
                                        "children": [turns[0][0]] if turns else []}}
    for i, (node, text, when) in enumerate(turns):
        mapping[node] = {
            "id": node, "parent": turns[i - 1][0] if i else "root",
            "children": [turns[i + 1][0]] if i + 1 < len(turns) else [],
            "message": {"id": node, "author": {"role": "user", "name": None, "metadata": {}},
                        "create_time": when, "update_time": None,
                        "content": {"content_type": "text", "parts": [text]},
                        "status": "finished_successfully", "weight": 1.0, "metadata": {},
                        "recipient": "all"}}
    conversation = {"title": title, "create_time": turns[0][2] if turns else 0.0,
                    "update_time": turns[-1][2] if turns else 0.0, "mapping": mapping,
                    "current_node": turns[-1][0] if turns else "root",
                    "conversation_id": cid, "id": cid}
    out.write(("" if first else ",\n") + json.dumps(conversation))


def synthetic_export(path: Path, messages: int, texts: Any, start: float = 1.6e9) -> None:
    with open(path, "w", encoding="utf-8") as out:
        out.write("[\n")
        written, number = 0, 0
        while written < messages:
            size = min(PER_CONVERSATION, messages - written)
            cid = str(uuid.UUID(int=number + 1))
            turns = [(f"n{number}-{i}", next(texts), start + number * 3600 + i * 30)
                     for i in range(size)]
            _write_conversation(out, cid, f"Chat {number}", turns, number == 0)
            written += size
            number += 1
        out.write("\n]\n")


def _locomo_time(date: str) -> float:
    try:
        return datetime.strptime(date, "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC).timestamp()
    except ValueError:
        return 1.6e9


def locomo_export(path: Path, conversations: list[LocomoConversation]) -> dict[str, str]:
    """The export, and each conversation's conversation id by sample id."""
    ids: dict[str, str] = {}
    with open(path, "w", encoding="utf-8") as out:
        out.write("[\n")
        for number, conv in enumerate(conversations):
            cid = ids[conv.sample_id] = str(uuid.uuid5(uuid.NAMESPACE_URL, conv.sample_id))
            # Turns of a session share its date: a second apart keeps their order.
            turns = [(t.dia_id, t.render(with_date=False), _locomo_time(t.date) + i)
                     for i, t in enumerate(conv.turns)]
            _write_conversation(out, cid, conv.sample_id, turns, number == 0)
        out.write("\n]\n")
    return ids


def turn_stamps(conv: LocomoConversation) -> list[str]:
    """The time the export gives each turn (as `locomo_export` writes it), as stored."""
    return [time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(_locomo_time(t.date) + i))
            for i, t in enumerate(conv.turns)]
