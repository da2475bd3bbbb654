"""The entry of every import (CLI and Python API): pick the reader, check the path, run."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tinycontext.domain.errors import InvalidRequestError

from . import own_format
from .items import SourceError, printable_name
from .report import ImportOptions, ImportSummary
from .runner import READERS, ImportTarget, Progress, run_import

FORMATS = ("tinycontext", *READERS)
# What to look for when a folder is given for a format that reads one file.
_INSIDE = {"chatgpt": "conversations.json", "claude": "conversations.json",
           "mcp-memory": "memory.jsonl"}
STDIN = "-"


def import_file(
    service: ImportTarget, fmt: str, path: str | Path, options: ImportOptions | None = None,
    progress: Progress | None = None,
) -> ImportSummary:
    """Import `path` read as `fmt` into the service's store (docs/guides/importing.md);
    "-" reads stdin."""
    options = options or ImportOptions()
    if fmt not in FORMATS:
        raise InvalidRequestError(
            f"Unknown import format {fmt!r}; use one of: {', '.join(FORMATS)}."
        )
    if options.batch_size < 1:
        raise InvalidRequestError("batch_size must be at least 1.")
    if str(path) == STDIN:
        return _from_stdin(service, fmt, options, progress)
    path = Path(path)
    label = printable_name(str(path))
    if path.is_dir() and fmt != "markdown":
        inner = _INSIDE.get(fmt)
        if inner is None or not (path / inner).is_file():
            raise SourceError(label, "", f"expected a file ({inner or 'the export'}), "
                              "found a folder")
        path = path / inner
    if not path.exists():
        raise SourceError(label, "", "expected a file or folder here; none exists (check "
                          "the path)")
    if fmt == "tinycontext":
        return own_format.run(service.core, str(path), options, progress)
    return run_import(service, fmt, path, options, progress)


def _from_stdin(service: ImportTarget, fmt: str, options: ImportOptions,
                progress: Progress | None) -> ImportSummary:
    if fmt == "tinycontext":
        return own_format.run(service.core, STDIN, options, progress)
    if fmt == "markdown":
        raise InvalidRequestError(
            "--from markdown reads a folder of notes, which stdin cannot carry: give the "
            "folder's path instead of -."
        )
    # The source is read twice (checked whole before anything is stored), so the pipe is
    # copied to a private file first; errors name stdin, not that file.
    with _spooled_stdin() as spool:
        try:
            return run_import(service, fmt, spool, options, progress)
        except SourceError as exc:
            raise SourceError(exc.file.replace(str(spool), "stdin", 1), exc.where,
                              exc.expected) from None


@contextmanager
def _spooled_stdin() -> Iterator[Path]:
    folder = tempfile.mkdtemp(prefix="tinycontext-import-")  # created 0700
    try:
        spool = Path(folder) / "stdin"
        descriptor = os.open(spool, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as out:
            shutil.copyfileobj(sys.stdin.buffer, out, 1 << 20)
        if spool.stat().st_size == 0:
            raise SourceError("stdin", "", "expected an export on stdin; nothing came (pipe "
                              "the file in, or give its path instead of -)")
        yield spool
    finally:
        shutil.rmtree(folder, ignore_errors=True)
