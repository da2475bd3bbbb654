"""A JSON (and JSONC: comments, trailing commas) reader that remembers where every value sits
in the text, so a config file can be edited in place: the bytes around an edit, comments and
formatting included, stay exactly as they were. Pure: text in, nodes out."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


class ConfigSyntaxError(ValueError):
    """A config file that cannot be read; `line` and `column` are 1-based."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(f"line {line} column {column}: {message}")
        self.reason, self.line, self.column = message, line, column
        self.path: object = None  # the file, once the caller knows it

    def located(self) -> str:
        """`file: line L column C: reason` (without the file until it is known)."""
        head = f"{self.path}: " if self.path is not None else ""
        return f"{head}line {self.line} column {self.column}: {self.reason}"


@dataclass(eq=False)
class Node:
    """One value: its text span [start, end) and, for containers, its parts.

    In plain JSON a nested container starts folded: decoded in one go by the standard library
    (fast on a large file such as ~/.claude.json) and read part by part only when asked for
    its members or items, which is only along the path an edit takes."""

    kind: str  # object | array | string | number | literal
    start: int
    end: int
    value: Any = None
    folded: str | None = None  # the document, while this container's parts are unread

    def __post_init__(self) -> None:
        self._members: list[Member] = []
        self._items: list[Node] = []

    @property
    def members(self) -> list[Member]:
        self._unfold()
        return self._members

    @property
    def items(self) -> list[Node]:
        self._unfold()
        return self._items

    def _unfold(self) -> None:
        if self.folded is None:
            return
        reader = _Reader(self.folded, comments=False)
        reader.at = self.start
        opened = reader.value(top=True)
        self._members, self._items, self.folded = opened._members, opened._items, None

    def get(self, key: str) -> Node | None:
        """The value of `key` (the last one when a key repeats, as JSON.parse does)."""
        found = None
        for member in self.members:
            if member.key == key:
                found = member.value
        return found

    def plain(self) -> Any:
        """The value as Python data (dicts keep the file's order)."""
        if self.folded is not None:
            return self.value
        if self.kind == "object":
            return {m.key: m.value.plain() for m in self.members}
        if self.kind == "array":
            return [item.plain() for item in self.items]
        return self.value


@dataclass
class Member:
    key: str
    key_start: int
    value: Node


def position(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of a character offset."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


_LITERALS = {"true": True, "false": False, "null": None}
_NUMBER_CHARS = frozenset("+-0123456789.eE")


class _Reader:
    def __init__(self, text: str, comments: bool) -> None:
        self.text, self.comments, self.at = text, comments, 0

    def fail(self, message: str, offset: int | None = None) -> ConfigSyntaxError:
        line, column = position(self.text, self.at if offset is None else offset)
        return ConfigSyntaxError(message, line, column)

    def skip(self) -> None:
        text = self.text
        while self.at < len(text):
            char = text[self.at]
            if char in " \t\r\n\ufeff":
                self.at += 1
            elif text.startswith("//", self.at) or text.startswith("/*", self.at):
                if not self.comments:
                    raise self.fail("comments are not allowed in this file (plain JSON)")
                if text[self.at + 1] == "/":
                    newline = text.find("\n", self.at)
                    self.at = len(text) if newline < 0 else newline + 1
                else:
                    close = text.find("*/", self.at + 2)
                    if close < 0:
                        raise self.fail("unterminated /* comment")
                    self.at = close + 2
            else:
                return

    def value(self, top: bool = False) -> Node:
        self.skip()
        if self.at >= len(self.text):
            raise self.fail("unexpected end of file, expected a value")
        char = self.text[self.at]
        if char in "{[" and not top and not self.comments:
            return self.folded(char)
        if char == "{":
            return self.object()
        if char == "[":
            return self.array()
        if char == '"':
            start = self.at
            text = self.string()
            return Node("string", start, self.at, text)
        if char in _NUMBER_CHARS:
            return self.number()
        for word, literal in _LITERALS.items():
            if self.text.startswith(word, self.at):
                start, self.at = self.at, self.at + len(word)
                return Node("literal", start, self.at, literal)
        raise self.fail(f"unexpected character {char!r}")

    def folded(self, char: str) -> Node:
        start = self.at
        try:
            decoded, self.at = json.JSONDecoder().raw_decode(self.text, start)
        except json.JSONDecodeError as exc:
            raise self.fail(exc.msg.lower(), exc.pos) from None
        return Node("object" if char == "{" else "array", start, self.at, decoded, self.text)

    def string(self) -> str:
        start = self.at
        decoder = json.JSONDecoder()
        try:
            text, self.at = decoder.raw_decode(self.text, start)
        except json.JSONDecodeError as exc:
            reason = exc.msg.lower().removesuffix(" at").replace("unterminated", "unclosed")
            raise self.fail(reason, exc.pos) from None
        if not isinstance(text, str):  # raw_decode at a quote always gives a string
            raise self.fail("expected a string", start)
        return text

    def number(self) -> Node:
        start = self.at
        while self.at < len(self.text) and self.text[self.at] in _NUMBER_CHARS:
            self.at += 1
        try:
            number = json.loads(self.text[start:self.at])
        except json.JSONDecodeError:
            raise self.fail("malformed number", start) from None
        return Node("number", start, self.at, number)

    def _separated(self, close: str, read_one: Any) -> None:
        """Items up to `close`, separated by commas (a trailing one only in JSONC)."""
        self.at += 1
        self.skip()
        if self.text.startswith(close, self.at):
            self.at += 1
            return
        while True:
            read_one()
            self.skip()
            if self.text.startswith(",", self.at):
                self.at += 1
                self.skip()
                if self.text.startswith(close, self.at):
                    if not self.comments:
                        raise self.fail("trailing comma is not allowed (plain JSON)")
                    self.at += 1
                    return
            elif self.text.startswith(close, self.at):
                self.at += 1
                return
            else:
                raise self.fail(f"expected ',' or '{close}'")

    def object(self) -> Node:
        node = Node("object", self.at, self.at)

        def member() -> None:
            if not self.text.startswith('"', self.at):
                raise self.fail("expected a quoted key")
            key_start = self.at
            key = self.string()
            self.skip()
            if not self.text.startswith(":", self.at):
                raise self.fail("expected ':' after the key")
            self.at += 1
            node._members.append(Member(key, key_start, self.value()))

        self._separated("}", member)
        node.end = self.at
        return node

    def array(self) -> Node:
        node = Node("array", self.at, self.at)
        self._separated("]", lambda: node._items.append(self.value()))
        node.end = self.at
        return node


def parse(text: str, comments: bool = False) -> Node:
    """The document's root value; `comments` accepts JSONC. Raises ConfigSyntaxError."""
    reader = _Reader(text, comments)
    root = reader.value(top=True)
    reader.skip()
    if reader.at != len(text):
        raise reader.fail("unexpected text after the end of the JSON value")
    return root
