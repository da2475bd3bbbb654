"""A folder of Markdown notes (Obsidian, basic-memory and the like) or one note.

Each section (a heading and what follows it, up to the next heading) is one memory, its
heading path in front ("Note title > Section"); a section over the note size is split at
paragraphs by the runner. Front-matter `tags` and inline `#tags` become tags; front-matter
`date`/`created` (else the file's modification time) dates the note's memories; the path
inside the folder is the session. Rule files (CLAUDE.md, AGENTS.md, .cursorrules ... see
rules.py) become profile memories instead. Hidden folders (.git, .obsidian, .trash) and
node_modules are not read.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from . import rules
from .items import ImportItem, Skipped, clean_tags, parse_when, printable_name, stamp_from_epoch

FORMAT = "markdown"
NOTE_SUFFIXES = (".md", ".markdown", ".mdown", ".txt")
MAX_FILE_BYTES = 32 << 20
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_INLINE_TAG = re.compile(r"(?<![\w&#/`])#([A-Za-z][\w/-]{0,63})")
_SKIPPED_DIRS = {"node_modules", "__pycache__"}


def read(path: Path, include_assistant: bool) -> Iterator[ImportItem | Skipped]:
    if path.is_file():
        yield from _file(path, path.name)
        return
    for folder, dirs, files in os.walk(path):
        here = Path(folder)
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS
                         and (not d.startswith(".") or rules.keeps_folder(here / d, path)))
        for name in sorted(files):
            file = here / name
            if name.lower().endswith(NOTE_SUFFIXES) or rules.is_rule_file(file):
                yield from _file(file, file.relative_to(path).as_posix())


def _file(file: Path, relative: str) -> Iterator[ImportItem | Skipped]:
    shown = printable_name(relative)
    try:
        size = file.stat().st_size
        if size > MAX_FILE_BYTES:
            yield Skipped(f"file over {MAX_FILE_BYTES >> 20} MB", shown)
            return
        text = file.read_bytes().decode("utf-8", "replace")
        mtime = file.stat().st_mtime
    except OSError as exc:
        yield Skipped(f"unreadable ({exc.strerror or type(exc).__name__})", shown)
        return
    front, body = split_front_matter(text)
    when = parse_when(front.get("date")) or parse_when(front.get("created")) \
        or stamp_from_epoch(mtime)
    if rules.is_rule_file(file):
        yield from rules.items(body, shown, when)
        return
    file_tags = list(clean_tags(front.get("tags") or front.get("tag") or []))
    emitted = False
    for number, (heading, section) in enumerate(sections(body)):
        if not section.strip():
            continue
        content = f"{heading}\n\n{section}" if heading else section
        digest = hashlib.sha256(content.encode("utf-8", "replace")).hexdigest()[:24]
        tags = clean_tags(file_tags + inline_tags(section))
        emitted = True
        yield ImportItem(
            source_id=f"{shown}/{digest}", content=content, created_at=when,
            session_id=shown, tags=tags, role="note",
            metadata={"imported_from": FORMAT, "file": shown[:200], "section": number},
        )
    if not emitted:
        yield Skipped("empty note", shown)


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """YAML front matter (between `---` lines at the top) and the rest of the text."""
    text = text.lstrip("\ufeff")
    if not text.startswith("---"):
        return {}, text
    end = re.search(r"^(---|\.\.\.)\s*$", text[3:], re.MULTILINE)
    first_line_end = text.find("\n")
    if end is None or first_line_end < 0 or text[3:first_line_end].strip():
        return {}, text
    raw = text[first_line_end + 1 : 3 + end.start()]
    body = text[3 + end.end():]
    try:
        import yaml  # type: ignore[import-untyped]

        data = yaml.safe_load(raw)
    except Exception:  # noqa: BLE001 - a damaged header is text, not a reason to fail
        return {}, text
    return (data if isinstance(data, dict) else {}), body


def sections(body: str) -> Iterator[tuple[str, str]]:
    """(heading path, text) for each heading's section; code fences are not headings."""
    path: list[tuple[int, str]] = []
    lines: list[str] = []
    heading = ""
    fence = False
    for line in body.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        match = None if fence else _HEADING.match(line)
        if match is None:
            lines.append(line)
            continue
        yield heading, "\n".join(lines).strip()
        level, title = len(match.group(1)), match.group(2).strip()
        path = [(lv, t) for lv, t in path if lv < level] + [(level, title)]
        heading = " > ".join(t for _, t in path if t)
        lines = []
    yield heading, "\n".join(lines).strip()


def inline_tags(text: str) -> list[str]:
    """#tags outside code (fenced blocks and `inline code`)."""
    plain = re.sub(r"```.*?```|~~~.*?~~~|`[^`\n]*`", " ", text, flags=re.DOTALL)
    return _INLINE_TAG.findall(plain)
