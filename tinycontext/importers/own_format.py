"""`--from tinycontext`: TinyContext's own JSON Lines export, through app/transfer.py (which
keeps ids, times, lifecycle and vectors); the dry run counts its records here. The export
may be a file or stdin, plain or sealed (`export --encrypt`)."""

from __future__ import annotations

import contextlib
import io
import shutil
import sys
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from tinycontext.app import sealed
from tinycontext.app.core import Core
from tinycontext.app.transfer import ImportReport, import_jsonl
from tinycontext.config.keys import key_material
from tinycontext.domain.errors import InvalidRequestError
from tinycontext.domain.records import ImportFormatError, parse_record

from .items import ImportItem, SourceError, printable_name
from .report import ImportOptions, ImportSummary
from .runner import Progress


@contextmanager
def export_lines(name: str, material: bytes | None) -> Iterator[Any]:
    """The lines of an export named `name` ("-" for stdin), plain or sealed. With a key
    configured, a pipe is spooled into a sealed temporary file, so no plaintext copy of the
    import lands on disk; without one, as before (the import spools a pipe itself)."""
    with contextlib.ExitStack() as stack:
        raw: Any = sys.stdin.buffer if name == "-" else stack.enter_context(open(name, "rb"))
        seekable = raw.seekable()
        head = raw.peek(len(sealed.MAGIC))[:len(sealed.MAGIC)] if hasattr(raw, "peek") else b""
        if not sealed.is_sealed(head) and material is None:
            yield io.TextIOWrapper(raw, encoding="utf-8")
            return
        if sealed.is_sealed(head) and material is None:
            raise sealed.SealedFileError(
                "this is an encrypted export: configure the key it was made with "
                "(TINYCONTEXT_ENCRYPTION_KEY_FILE or TINYCONTEXT_ENCRYPTION_KEY)")
        assert material is not None
        if not seekable or not sealed.is_sealed(head):
            spool = stack.enter_context(tempfile.TemporaryFile("w+b"))
            if sealed.is_sealed(head):
                shutil.copyfileobj(raw, spool)  # already ciphertext
            else:
                writer = sealed.text_writer(spool, material)
                for line in io.TextIOWrapper(raw, encoding="utf-8"):
                    writer.write(line)
                writer.close()
            raw = spool
        yield sealed.Replayable(raw, material)


def check_options(options: ImportOptions) -> None:
    if options.session_id or options.tags or options.include_assistant:
        raise InvalidRequestError(
            "--session, --tags and --include-assistant do not apply to --from tinycontext: "
            "an export is restored with its own sessions; leave them out."
        )


def run(core: Core, name: str, options: ImportOptions,
        progress: Progress | None = None) -> ImportSummary:
    """Import (or, in a dry run, count) the export at `name` ("-" reads stdin)."""
    check_options(options)
    try:
        with export_lines(name, key_material(core.config)) as lines:
            return _run(core, lines, options, progress)
    except sealed.SealedFileError as exc:
        raise InvalidRequestError(f"{_label(name)}: {exc}. Nothing was imported.") from None
    except UnicodeDecodeError as exc:
        raise SourceError(_label(name), f"byte {exc.start}", "expected UTF-8 text") from None


def _label(name: str) -> str:
    return "stdin" if name == "-" else printable_name(name)


def _run(core: Core, lines: Iterable[str], options: ImportOptions,
         progress: Progress | None = None) -> ImportSummary:
    summary = ImportSummary(fmt="tinycontext", dry_run=options.dry_run)
    if options.dry_run:
        for number, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue
            try:
                memory, _ = parse_record(raw)
            except ValueError as exc:
                raise ImportFormatError(number, str(exc)) from None
            item = ImportItem(source_id=memory.id, content=memory.content,
                              created_at=memory.created_at, session_id=memory.session_id,
                              kind=memory.kind, role="memory", tags=memory.tags)
            summary.count(item, already=bool(core.store.find(memory.id, is_ref=False)))
        return summary

    def step(report: ImportReport) -> None:
        if progress is not None:
            progress(report.imported + report.already_present, 0)

    report = import_jsonl(core, lines, max(1, options.batch_size * 4), step)
    summary.pieces = report.imported + report.already_present
    summary.new = report.imported
    summary.imported, summary.already_imported = report.imported, report.already_present
    summary.redacted = report.redacted
    return summary
