"""Moved to tinycontext/app/rendering.py (issue 14); this path keeps working."""

from tinycontext.app.rendering import MEMORY_FRAME, NEEDS_ESCAPE, PROMPT_FRAMING, escape

__all__ = ["MEMORY_FRAME", "NEEDS_ESCAPE", "PROMPT_FRAMING", "escape"]
