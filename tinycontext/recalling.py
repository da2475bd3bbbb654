"""Moved to tinycontext/app/recalling.py (issue 14): edit the recall modes there. The names
stay importable from here; the functions now take the application core (`MemoryService.core`)
instead of the service."""

from tinycontext.app.recalling import (
    PROFILE_POOL_LIMIT,
    count_recalls,
    profile_pool,
    recent_recall,
    semantic_recall,
)

__all__ = ["PROFILE_POOL_LIMIT", "count_recalls", "profile_pool", "recent_recall",
           "semantic_recall"]
