"""The entry of every import (CLI and Python API): pick the reader, check the path, run."""

from __future__ import annotations

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


def import_file(
    service: ImportTarget, fmt: str, path: str | Path, options: ImportOptions | None = None,
    progress: Progress | None = None,
) -> ImportSummary:
    """Import `path` read as `fmt` into the service's store (docs/guides/importing.md)."""
    options = options or ImportOptions()
    if fmt not in FORMATS:
        raise InvalidRequestError(
            f"Unknown import format {fmt!r}; use one of: {', '.join(FORMATS)}."
        )
    if options.batch_size < 1:
        raise InvalidRequestError("batch_size must be at least 1.")
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
        return own_format.run(service.core, path, options, progress)
    return run_import(service, fmt, path, options, progress)
