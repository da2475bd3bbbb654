"""Streaming JSON: the records of a big export one at a time (constant memory).

Exports such as ChatGPT's conversations.json are one JSON array that can reach gigabytes;
ijson parses it incrementally, so only the record being read is held. Zip archives are read
in place (no extraction). Errors name the file, the record's position and what was expected.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import IO, Any, NamedTuple

from .items import Skipped, SourceError, printable_name, stamp_from_epoch

Opener = Callable[[], AbstractContextManager[IO[bytes]]]
_BOM = b"\xef\xbb\xbf"


def source(path: Path, inner: str) -> tuple[Opener, str]:
    """How to open `path` (or, for a zip archive, its member named `inner`) and its label."""
    label = printable_name(str(path))
    if not zipfile.is_zipfile(path):
        return (lambda: open(path, "rb")), label  # noqa: SIM115 - the caller closes it
    with zipfile.ZipFile(path) as archive:
        names = [n for n in archive.namelist() if n.rsplit("/", 1)[-1] == inner]
    if not names:
        raise SourceError(label, "", f"expected a {inner} inside this zip archive")
    member = min(names, key=lambda n: (n.count("/"), n))

    @contextmanager
    def open_member() -> Iterator[IO[bytes]]:
        with zipfile.ZipFile(path) as archive, archive.open(member) as stream:
            yield stream

    return open_member, f"{label}:{printable_name(member)}"


def _first_byte(stream: IO[bytes]) -> bytes:
    """The first significant byte (a byte-order mark and whitespace are consumed)."""
    while True:
        byte = stream.read(1)
        if byte in (b" ", b"\t", b"\r", b"\n"):
            continue
        if byte == _BOM[:1]:
            stream.read(2)
            continue
        return byte


def _reader(stream: IO[bytes], first: bytes) -> IO[bytes]:
    """The stream again from its first significant byte (which was already read)."""

    class Rejoined:
        def __init__(self) -> None:
            self.head = first

        def read(self, size: int = -1) -> bytes:
            if size == 0:  # ijson reads 0 bytes to learn whether the stream is binary
                return b""
            head, self.head = self.head, b""
            if size < 0:
                return head + stream.read()
            return head + stream.read(max(0, size - len(head))) if head else stream.read(size)

    return Rejoined()  # type: ignore[return-value]


def _array_key(opener: Opener, keys: tuple[str, ...]) -> str | None:
    """The first of `keys` that holds an array at the top of a JSON object."""
    import ijson  # type: ignore[import-untyped]

    with opener() as stream:
        first = _first_byte(stream)
        expecting: str | None = None
        try:
            for prefix, event, value in ijson.parse(_reader(stream, first)):
                if prefix == "" and event == "map_key":
                    expecting = value if value in keys else None
                elif expecting is not None and prefix == expecting:
                    if event == "start_array":
                        return expecting
                    expecting = None
        except (ijson.JSONError, UnicodeDecodeError):
            return None
    return None


def records(
    opener: Opener, label: str, what: str, keys: tuple[str, ...] = ()
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each object of a top-level array (or of the array under one of `keys` in a top-level
    object) with its JSON path, e.g. `[12]` or `memories[12]`."""
    import ijson

    with opener() as stream:
        first = _first_byte(stream)
    if first == b"[":
        prefix, name = "item", ""
    elif first == b"{" and keys:
        key = _array_key(opener, keys)
        if key is None:
            raise SourceError(label, "the top level",
                              f"expected an object with {' or '.join(map(repr, keys))} "
                              f"holding an array of {what}")
        prefix, name = f"{key}.item", key
    else:
        shape = "a JSON array" + (f" (or an object with {'/'.join(keys)})" if keys else "")
        raise SourceError(label, "the first character", f"expected {shape} of {what}")
    index = 0
    with opener() as stream:
        parsed = ijson.items(_reader(stream, _first_byte(stream)), prefix, use_float=True)
        while True:
            try:
                item = next(parsed)
            except StopIteration:
                return
            except (ijson.JSONError, UnicodeDecodeError) as exc:
                raise SourceError(label, f"{name}[{index}]",
                                  f"expected complete JSON for {what} (the file is "
                                  f"truncated or damaged: {_short(exc)})") from None
            if not isinstance(item, dict):
                raise SourceError(label, f"{name}[{index}]", f"expected an object ({what})")
            yield f"{name}[{index}]", item
            index += 1


def json_lines(opener: Opener, label: str, what: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each non-blank line of a JSON Lines file as an object, with `line N`."""
    with opener() as stream:
        for number, raw in enumerate(stream, start=1):
            if number == 1 and raw.startswith(_BOM):
                raw = raw[len(_BOM):]
            if not raw.strip():
                continue
            try:
                item = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise SourceError(label, f"line {number}",
                                  f"expected one JSON object per line ({_short(exc)})") from None
            if not isinstance(item, dict):
                raise SourceError(label, f"line {number}", f"expected a JSON object ({what})")
            yield f"line {number}", item


def looks_like_lines(opener: Opener) -> bool:
    """Whether the file is JSON Lines: its first line is a whole JSON object by itself."""
    with opener() as stream:
        line = stream.readline(1 << 20)
    try:
        return isinstance(json.loads(line.lstrip(_BOM).decode("utf-8")), dict)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return False


def _short(exc: Exception) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text[:120]


def any_records(
    opener: Opener, label: str, what: str, keys: tuple[str, ...]
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Records of a JSON array, of an object holding one under `keys`, or of JSON Lines."""
    with opener() as stream:
        first = _first_byte(stream)
    if first == b"{" and _array_key(opener, keys) is None and looks_like_lines(opener):
        return json_lines(opener, label, what)
    return records(opener, label, what, keys)


class TextRecord(NamedTuple):
    label: str  # the file, for errors
    where: str  # the record's JSON path or line
    record: dict[str, Any]
    text: str  # the first of the asked-for fields the record has
    default_when: str  # for records without a time: the file's modification time


def text_records(
    path: Path, inner: str, arrays: tuple[str, ...], fields: tuple[str, ...]
) -> Iterator[TextRecord | Skipped]:
    """A memory tool's export, record by record; a record with an empty text is a Skipped."""
    opener, label = source(path, inner)
    default_when = stamp_from_epoch(path.stat().st_mtime)
    for where, record in any_records(opener, label, "memories", arrays):
        text = next((record[field] for field in fields if field in record), None)
        if not isinstance(text, str):
            raise SourceError(label, f"{where}.{fields[0]}", "expected the memory's text")
        if not text.strip():
            yield Skipped("empty memory", where)
            continue
        yield TextRecord(label, where, record, text, default_when)
