"""`tinycontext import`: bring memories in from TinyContext's own export (the default) or from
another tool's (ChatGPT, Claude, the MCP memory server, Mem0, mcp-memory-service, Markdown
notes). The work is in tinycontext/importers/; this module is the command line."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

IMPORT_HELP = (
    "Import memories. Without --from, PATH is a TinyContext JSON Lines export (keeps ids and "
    "timestamps, skips memories already present, re-embeds when the model differs). With "
    "--from FORMAT, reads another tool's export: chatgpt and claude (the data export zip or "
    "its conversations.json; each of your messages becomes a memory dated when you sent it, "
    "in a session named after the conversation), mcp-memory (the MCP memory server's "
    "memory.jsonl), mem0, mcp-memory-service (their JSON exports), markdown (a folder of "
    "notes; CLAUDE.md, AGENTS.md and other rule files become profile memories). The whole "
    "file is checked before anything is stored; importing it again adds nothing, and an "
    "interrupted import is finished by running it again. An encrypted export (export "
    "--encrypt) is read with the configured key. See docs/guides/importing.md."
)
SHOWN_SESSIONS = 15


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from tinycontext.importers.importing import FORMATS

    parser.add_argument("file", metavar="PATH",
                        help="the export file or folder; - reads it from stdin (every "
                        "format but markdown, which reads a folder)")
    parser.add_argument("--from", dest="fmt", choices=FORMATS, default="tinycontext",
                        help="what PATH is (default: tinycontext, this tool's own export)")
    parser.add_argument("--session", help="put every imported episodic memory in this "
                        "session (default: one session per conversation / note)")
    parser.add_argument("--tags", nargs="+", default=[], metavar="TAG",
                        help="tags added to every imported memory")
    parser.add_argument("--include-assistant", action="store_true",
                        help="chatgpt/claude: import the assistant's replies too")
    parser.add_argument("--dry-run", action="store_true",
                        help="show what would be imported and skipped; change nothing")
    parser.add_argument("--json", action="store_true",
                        help="print the summary as JSON on stdout")
    parser.add_argument("--batch-size", type=int, default=None,
                        help="memories per transaction (default 256 for tinycontext, 64 "
                        "otherwise)")


def run(args: argparse.Namespace) -> int:
    from tinycontext.domain.errors import TinyContextError
    from tinycontext.entry.bootstrap import engine_service
    from tinycontext.importers.importing import import_file
    from tinycontext.importers.report import ImportOptions

    if args.file != "-" and not Path(args.file).exists():  # before a store or model is opened
        what = ("the notes folder" if args.fmt == "markdown"
                else "the export file (or - to read it from stdin)")
        print(f"tinycontext import: {args.file} does not exist: give {what}; formats and "
              "what each reads: `tinycontext import --help`", file=sys.stderr)
        return 2
    if args.fmt == "tinycontext" and not args.dry_run and not args.json:
        return _own_export(args)
    options = ImportOptions(
        session_id=args.session, tags=tuple(args.tags), include_assistant=args.include_assistant,
        dry_run=args.dry_run, batch_size=args.batch_size or 64,
    )
    service = engine_service()
    bar = _Progress(args.fmt)
    try:
        summary = import_file(service, args.fmt, Path(args.file), options, bar)
    except TinyContextError as exc:
        bar.close()
        print(f"tinycontext import: {exc.message}", file=sys.stderr)
        return 1
    finally:
        bar.close()
        service.close()
    result = summary.to_dict()
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
    if args.dry_run:
        _print_dry_run(result, args.file, sys.stdout if not args.json else sys.stderr)
    else:
        print(_done_line(result), file=sys.stderr)
    return 0


def _done_line(result: dict[str, Any]) -> str:
    line = (f"tinycontext import: {result['imported']} imported, {result['already_imported']} "
            f"already imported, {result['skipped_duplicates']} skipped as duplicates, "
            f"{sum(s['count'] for s in result['skipped'])} source items skipped.")
    if result["redacted"]:
        line += (f"\ntinycontext import: secrets replaced by [redacted:<type>] in "
                 f"{result['redacted']} memories (redact_secrets).")
    return line


def _print_dry_run(result: dict[str, Any], path: str, out: Any) -> None:
    def write(text: str = "") -> None:
        print(text, file=out)

    write(f"Dry run of --from {result['format']} {path}: nothing was changed.")
    write(f"Would import {result['new']} memories ({result['already_imported']} already "
          f"imported, {result['split_messages']} long texts split). Near-duplicates of stored "
          "memories are only found while importing (dedup needs the embeddings).")
    sessions = result["sessions"]
    if sessions:
        write("\nBy session and kind:")
        for row in sorted(sessions, key=lambda r: -r["count"])[:SHOWN_SESSIONS]:
            write(f"  {row['count']:>7}  {row['kind']:<8}  {row['session_id']}")
        if len(sessions) > SHOWN_SESSIONS:
            rest = sum(r["count"] for r in sorted(sessions, key=lambda r: -r["count"])
                       [SHOWN_SESSIONS:])
            write(f"  {rest:>7}  in {len(sessions) - SHOWN_SESSIONS} more sessions")
    if result["skipped"]:
        write("\nSkipped:")
        for row in result["skipped"]:
            write(f"  {row['count']:>7}  {row['reason']} (first: {row['first_at']})")
    if result["tags"]:
        write("\nTags: " + ", ".join(f"{t} ({n})" for t, n in result["tags"].items()))
    if result["samples"]:
        write("\nSample:")
        for sample in result["samples"]:
            text = " ".join(sample["content"].split())
            write(f"  [{sample['created_at']}] {sample['kind']}, "
                  f"{sample['session_id'] or 'no session'}: {text}")


class _Progress:
    """A progress bar with rate and ETA on a terminal (tqdm), plain lines otherwise."""

    def __init__(self, fmt: str) -> None:
        self.fmt, self.last = fmt, 0.0
        self.bar: Any = None
        self.tty = sys.stderr.isatty()

    def __call__(self, done: int, total: int) -> None:
        if total == 0:  # still checking the file
            if time.monotonic() - self.last >= 2.0:
                self.last = time.monotonic()
                print(f"checked {done} memories...", file=sys.stderr, flush=True)
            return
        if self.tty:
            if self.bar is None:
                from tqdm import tqdm  # type: ignore[import-untyped]

                self.bar = tqdm(total=total, unit="memory", desc="importing", file=sys.stderr)
            self.bar.update(done - self.bar.n)
        elif time.monotonic() - self.last >= 2.0 or done == total:
            self.last = time.monotonic()
            print(f"imported {done}/{total}...", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def _own_export(args: argparse.Namespace) -> int:
    """TinyContext's own export (plain or sealed, a file or stdin), as the import command
    always read it."""
    from tinycontext.app.sealed import SealedFileError
    from tinycontext.app.transfer import ImportReport, import_jsonl
    from tinycontext.config.keys import key_material
    from tinycontext.domain.records import ImportFormatError
    from tinycontext.entry.bootstrap import engine_service
    from tinycontext.importers.own_format import export_lines

    if args.session or args.tags or args.include_assistant:
        print("tinycontext import: --session, --tags and --include-assistant need --from "
              "FORMAT (a TinyContext export keeps its own sessions).", file=sys.stderr)
        return 2
    last = [0.0]

    def progress(report: ImportReport) -> None:
        if time.monotonic() - last[0] >= 1.0:
            last[0] = time.monotonic()
            print(f"imported {report.imported} (already present {report.already_present}, "
                  f"re-embedded {report.reembedded}) through line {report.lines}...",
                  file=sys.stderr, flush=True)

    service = engine_service()
    try:
        with export_lines(args.file, key_material(service.config)) as source:
            report = import_jsonl(service, source,
                                  max(1, args.batch_size or 256), progress)
    except (ImportFormatError, SealedFileError) as exc:
        where = "stdin" if args.file == "-" else args.file
        print(f"tinycontext import: {where}: {getattr(exc, 'message', exc)}", file=sys.stderr)
        return 1
    finally:
        service.close()
    print(f"tinycontext import: {report.imported} imported, {report.already_present} already "
          f"present, {report.reembedded} re-embedded ({report.lines} lines).", file=sys.stderr)
    if report.redacted:
        print(f"tinycontext import: secrets replaced by [redacted:<type>] in {report.redacted} "
              "memories (redact_secrets).", file=sys.stderr)
    return 0
