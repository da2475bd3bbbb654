"""`--from tinycontext`: TinyContext's own JSON Lines export, through app/transfer.py (which
keeps ids, times, lifecycle and vectors); the dry run counts its records here."""

from __future__ import annotations

from pathlib import Path

from tinycontext.app.core import Core
from tinycontext.app.transfer import ImportReport, import_jsonl
from tinycontext.domain.errors import InvalidRequestError
from tinycontext.domain.records import ImportFormatError, parse_record

from .items import ImportItem, SourceError, printable_name
from .report import ImportOptions, ImportSummary
from .runner import Progress


def check_options(options: ImportOptions) -> None:
    if options.session_id or options.tags or options.include_assistant:
        raise InvalidRequestError(
            "--session, --tags and --include-assistant do not apply to --from tinycontext: "
            "an export is restored with its own sessions; leave them out."
        )


def run(core: Core, path: Path, options: ImportOptions,
        progress: Progress | None = None) -> ImportSummary:
    check_options(options)
    try:
        return _run(core, path, options, progress)
    except UnicodeDecodeError as exc:
        raise SourceError(printable_name(str(path)), f"byte {exc.start}",
                          "expected UTF-8 text") from None


def _run(core: Core, path: Path, options: ImportOptions,
         progress: Progress | None = None) -> ImportSummary:
    summary = ImportSummary(fmt="tinycontext", dry_run=options.dry_run)
    if options.dry_run:
        with open(path, encoding="utf-8") as lines:
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

    with open(path, encoding="utf-8") as lines:
        report = import_jsonl(core, lines, max(1, options.batch_size * 4), step)
    summary.pieces = report.imported + report.already_present
    summary.new = report.imported
    summary.imported, summary.already_imported = report.imported, report.already_present
    summary.redacted = report.redacted
    return summary
