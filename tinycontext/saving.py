"""Moved to tinycontext/app/saving.py (issue 14). The names stay importable from here; the
functions now take the application core (`MemoryService.core`) instead of the service."""

from tinycontext.app.saving import NEIGHBOURS, PARALLEL_LOOKUPS, SavePlan, plan_saves

__all__ = ["NEIGHBOURS", "PARALLEL_LOOKUPS", "SavePlan", "plan_saves"]
