"""The in-place JSON editor on many generated documents (seeded, so every run checks the same
ones): whatever the layout (indent 2, 4, tabs, one line, JSONC comments and trailing commas),
adding an entry gives exactly the expected data, and removing it gives the original text back
byte for byte."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest

from tinycontext.clients import jsonmerge
from tinycontext.clients.jsontext import parse

KEYS = ["a", "mcpServers", "servers", "théme", "x y", "", "k\"q", "n1", "hooks"]


def _value(rng: random.Random, depth: int) -> Any:
    kind = rng.choice(["obj", "arr", "str", "num", "lit"] if depth < 3 else ["str", "num", "lit"])
    if kind == "obj":
        return {rng.choice(KEYS) + str(i): _value(rng, depth + 1)
                for i in range(rng.randint(0, 3))}
    if kind == "arr":
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    if kind == "str":
        return rng.choice(["", "plain", "with \"quotes\"", "é ✓", "line\nbreak", "//not a comment"])
    if kind == "num":
        return rng.choice([0, -1, 2.5, 1e21, 12345678901234567890])
    return rng.choice([True, False, None])


def _render(doc: Any, rng: random.Random, jsonc: bool) -> str:
    style = rng.choice(["2", "4", "tab", "compact"])
    if style == "compact":
        text = json.dumps(doc, ensure_ascii=False)
    else:
        text = json.dumps(doc, ensure_ascii=False, indent="\t" if style == "tab" else int(style))
    if jsonc and style != "compact":
        lines = text.split("\n")
        for i in range(len(lines) - 1, 0, -1):  # comments on their own lines, between members
            if rng.random() < 0.2 and lines[i - 1].rstrip().endswith(("{", "[", ",")):
                lead = lines[i][:len(lines[i]) - len(lines[i].lstrip())]
                lines.insert(i, f"{lead}// note {i}")
        text = "\n".join(lines)
        if rng.random() < 0.5:
            text = "/* settings */\n" + text
        if rng.random() < 0.5:  # trailing commas after last members
            text = re.sub(r'([^\s{\[,/])(\n\s*[}\]])', r"\1,\2", text)
    return text + ("\n" if rng.random() < 0.8 else "")


@pytest.mark.parametrize("jsonc", [False, True], ids=["json", "jsonc"])
def test_add_then_remove_on_generated_documents(jsonc: bool) -> None:
    rng = random.Random(20261204)
    for _ in range(300):
        root = _value(rng, 0)
        doc: dict[str, Any] = root if isinstance(root, dict) and rng.random() < 0.8 else {}
        if rng.random() < 0.5:
            doc["mcpServers"] = _value(rng, 2) if rng.random() < 0.2 else {
                "other": {"command": "x"}}
        if not isinstance(doc.get("mcpServers", {}), dict):
            doc["mcpServers"] = {}
        text = _render(doc, rng, jsonc)
        entry = {"command": "/opt/tinycontext", "args": ["mcp"]}
        new = jsonmerge.set_value(text, ("mcpServers", "tinycontext"), entry, jsonc)
        expected = json.loads(json.dumps(doc))
        expected.setdefault("mcpServers", {})["tinycontext"] = entry
        assert parse(new, jsonc).plain() == expected, text
        back = jsonmerge.delete(new, ("mcpServers", "tinycontext"), jsonc,
                                prune=0 if "mcpServers" in doc else 1)
        assert back == text, (text, new, back)
