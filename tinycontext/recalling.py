"""Moved to tinycontext/app/recalling.py (issue 14): edit the recall modes there. This path
keeps working for code that imported it."""

from tinycontext.app.recalling import (
    PROFILE_POOL_LIMIT,
    count_recalls,
    profile_pool,
    recent_recall,
    semantic_recall,
)

__all__ = ["PROFILE_POOL_LIMIT", "count_recalls", "profile_pool", "recent_recall",
           "semantic_recall"]
