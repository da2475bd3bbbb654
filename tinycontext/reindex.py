"""Moved to tinycontext/app/reindex.py (issue 14); this path keeps working."""

from tinycontext.app.reindex import MAINTENANCE_INTERVAL, Reindexer

__all__ = ["MAINTENANCE_INTERVAL", "Reindexer"]
