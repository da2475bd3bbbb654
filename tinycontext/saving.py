"""Moved to tinycontext/app/saving.py (issue 14); this path keeps working."""

from tinycontext.app.saving import NEIGHBOURS, PARALLEL_LOOKUPS, SavePlan, measure, plan_saves

__all__ = ["NEIGHBOURS", "PARALLEL_LOOKUPS", "SavePlan", "measure", "plan_saves"]
