"""Moved to tinycontext/app/transfer.py and transfer_format.py (issue 14); this path keeps
working for code that imported it."""

from tinycontext.app.transfer import PAGE, ImportReport, export_jsonl, import_jsonl, iter_stored
from tinycontext.app.transfer_format import ImportFormatError, parse_record, record

__all__ = ["PAGE", "ImportFormatError", "ImportReport", "export_jsonl", "import_jsonl",
           "iter_stored", "parse_record", "record"]
