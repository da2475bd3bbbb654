"""Agent rule files (CLAUDE.md, AGENTS.md, GEMINI.md, .cursorrules, .windsurfrules,
.clinerules, .github/copilot-instructions.md, .cursor/rules/*.mdc): each rule a profile
memory. A rule is a list item (with its continuation lines) or a paragraph; a fenced code
block belongs to the rule before it; a rule under a sub-heading reads "Heading: rule".
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from pathlib import Path

from tinycontext.domain.memory import PROFILE

from .items import ImportItem, Skipped

RULE_NAMES = {"claude.md", "claude.local.md", "agents.md", "gemini.md", ".cursorrules",
              ".windsurfrules", ".clinerules", "copilot-instructions.md"}
_ITEM = re.compile(r"^(\s*)([-*+]|\d+[.)])\s+")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def is_rule_file(file: Path) -> bool:
    name = file.name.lower()
    return name in RULE_NAMES or (name.endswith(".mdc") and file.parent.name == "rules")


def keeps_folder(folder: Path, root: Path) -> bool:
    """Hidden folders are skipped, except where rule files live (.cursor/rules, .github)."""
    return folder.name in (".cursor", ".github", ".clinerules") or (
        folder.name == "rules" and folder.parent.name == ".cursor")


def rule_texts(body: str) -> list[str]:
    """The rules of a rule file, in order (rule files are small: read whole)."""
    rules: list[tuple[str, list[str]]] = []  # (heading, lines)
    heading = owner = ""
    current: list[str] | None = None
    fence = False
    for line in body.splitlines():
        stripped = line.lstrip()
        if stripped.startswith(("```", "~~~")):
            if not fence and current is None:
                # A code block continues the rule before it, even after a blank line.
                owner, current = rules.pop() if rules else (heading, [])
                if current:
                    current.append("")
            elif not fence:
                owner = heading
            fence = not fence
            current = current if current is not None else []
            current.append(line)
            if not fence:
                rules.append((owner, current))
                current = None
            continue
        if fence:
            assert current is not None
            current.append(line)
            continue
        heading_match = _HEADING.match(line)
        item = _ITEM.match(line)
        if heading_match or not line.strip() or (item and not item.group(1)):
            if current:
                rules.append((heading, current))
            current = None
            if heading_match:
                level = len(heading_match.group(1))
                heading = heading_match.group(2).strip() if level > 1 else ""
                continue
            if not line.strip():
                continue
        if item and not item.group(1):
            line = line[item.end():]
        current = (current or []) + [line.strip() if not current else line]
    if current:
        rules.append((heading, current))
    out = []
    for title, lines in rules:
        text = "\n".join(lines).strip()
        if text:
            out.append(f"{title}: {text}" if title else text)
    return out


def items(body: str, shown: str, when: str) -> Iterator[ImportItem | Skipped]:
    any_rule = False
    for rule in rule_texts(body):
        any_rule = True
        digest = hashlib.sha256(rule.encode("utf-8", "replace")).hexdigest()[:24]
        yield ImportItem(
            source_id=f"rule/{shown}/{digest}", content=rule, created_at=when, kind=PROFILE,
            role="rule", metadata={"imported_from": "markdown", "file": shown[:200]},
        )
    if not any_rule:
        yield Skipped("rule file without rules", shown)
