"""Edits of JSON/JSONC text in place: insert, replace or remove one object member or array item
and leave every other byte (comments, order, indentation) as it was. Pure: text in, text out;
the caller re-parses (tinycontext.clients.jsontext) between edits."""

from __future__ import annotations

import json
import re
from typing import Any

from tinycontext.clients.jsontext import Node

_INDENTED = re.compile(r"^([ \t]+)\S", re.MULTILINE)


def indent_unit(text: str) -> str:
    """The file's indentation step (its first indented line's), two spaces when it has none."""
    found = _INDENTED.search(text)
    if found is None:
        return "  "
    lead = found.group(1)
    return "\t" if lead.startswith("\t") else lead


def _line_start(text: str, offset: int) -> int:
    return text.rfind("\n", 0, offset) + 1


def _line_indent(text: str, offset: int) -> str:
    start = _line_start(text, offset)
    return text[start:len(text[start:]) - len(text[start:].lstrip(" \t")) + start]


def _alone_on_line(text: str, offset: int) -> bool:
    return text[_line_start(text, offset):offset].strip(" \t") == ""


def is_compact(text: str, node: Node) -> bool:
    """A container written on one line (`{"a": 1}`): new parts go on that line too."""
    parts = node.members or node.items
    return bool(parts) and "\n" not in text[node.start:node.end]


def dump(value: Any, unit: str, base: str, compact: bool = False) -> str:
    """`value` as JSON text, continuation lines indented from `base` by `unit`."""
    if compact:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    step: int | str = unit if unit == "\t" else len(unit)
    lines = json.dumps(value, ensure_ascii=False, indent=step).split("\n")
    return "\n".join([lines[0], *(base + line for line in lines[1:])])


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t":
        at += 1
    return at


def _parts(node: Node) -> list[tuple[int, int]]:
    if node.kind == "object":
        return [(m.key_start, m.value.end) for m in node.members]
    return [(item.start, item.end) for item in node.items]


def _comma_after(text: str, end: int) -> int | None:
    """Offset of the comma that follows a part (comments and blanks between allowed)."""
    at = end
    while at < len(text):
        if text[at] in " \t\r\n":
            at += 1
        elif text.startswith("//", at):
            at = text.find("\n", at) if "\n" in text[at:] else len(text)
        elif text.startswith("/*", at):
            at = text.find("*/", at) + 2
        else:
            return at if text[at] == "," else None
    return None


def insert(text: str, container: Node, part: str) -> str:
    """Add `part` (a `"key": value` member or an item, already serialized) at the end."""
    parts = _parts(container)
    unit = indent_unit(text)
    if not parts:
        opening = _line_indent(text, container.start)
        inner = text[container.start + 1:container.end - 1]
        body = f"\n{opening}{unit}{part}\n{opening}"
        if inner.strip() == "":
            return text[:container.start + 1] + body + text[container.end - 1:]
        return text[:container.start + 1] + f"\n{opening}{unit}{part}," + text[container.start + 1:]
    last_end = parts[-1][1]
    comma = _comma_after(text, last_end)  # a trailing comma (JSONC): the new part gets one too
    at = last_end if comma is None else comma + 1
    glue = "" if comma is not None else ","
    part += "" if comma is None else ","
    if is_compact(text, container):
        return text[:last_end] + glue + text[last_end:at] + " " + part + text[at:]
    lead = _part_base(text, container)
    # After a trailing line comment the new part goes on the next line, the comment stays.
    rest = _skip_space(text, at)
    if text.startswith("//", rest):
        at = text.find("\n", rest) if "\n" in text[rest:] else len(text)
    return text[:last_end] + glue + text[last_end:at] + f"\n{lead}{part}" + text[at:]


def _part_base(text: str, container: Node) -> str:
    """The indentation of the container's parts (its last part's, else one step in)."""
    parts = _parts(container)
    if parts and _alone_on_line(text, parts[-1][0]):
        return _line_indent(text, parts[-1][0])
    return _line_indent(text, container.start) + indent_unit(text)


def member_text(text: str, container: Node, key: str, value: Any) -> str:
    """`"key": value` laid out for `container` (its members' indentation)."""
    return json.dumps(key, ensure_ascii=False) + ": " + item_text(text, container, value)


def item_text(text: str, container: Node, value: Any) -> str:
    """`value` laid out as a part of `container`."""
    return dump(value, indent_unit(text), _part_base(text, container),
                is_compact(text, container))


def replace(text: str, node: Node, value: Any, compact: bool = False) -> str:
    """Put `value` where `node` was, indented like the line it starts on."""
    base = _line_indent(text, node.start)
    return text[:node.start] + dump(value, indent_unit(text), base, compact) + text[node.end:]


def remove(text: str, container: Node, index: int) -> str:
    """Take out part `index` of an object or array with its comma; its own lines go too."""
    parts = _parts(container)
    start, end = parts[index]
    comma = _comma_after(text, end)
    if comma is not None:
        end = comma + 1
    elif index > 0:  # the last part: drop the comma before it instead
        before = _comma_after(text, parts[index - 1][1])
        if before is not None:
            after = _skip_space(text, end)
            if not _alone_on_line(text, start):  # `{"a": 1, "t": 2}`: from the comma on
                return text[:before] + text[end:]
            if text.startswith("\r\n", after) or text.startswith("\n", after):
                start, end = _line_start(text, start), after + (2 if text[after] == "\r" else 1)
            text = text[:start] + text[end:]
            return text[:before] + text[before + 1:]
    after = _skip_space(text, end)
    if _alone_on_line(text, start) and after < len(text) and text[after] in "\r\n":
        start = _line_start(text, start)
        end = after + (2 if text.startswith("\r\n", after) else 1)
    elif not _alone_on_line(text, start):
        end = after
    text = text[:start] + text[end:]
    if len(parts) == 1:  # now empty: `{}` / `[]` unless comments are left inside
        close = container.end - 1 - (end - start)
        if text[container.start + 1:close].strip() == "":
            text = text[:container.start + 1] + text[close:]
    return text
