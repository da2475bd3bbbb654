"""Moved to tinycontext/app/service.py (issue 14); this path keeps working for users and tests."""

from tinycontext.app.service import MemoryService, long_content_notice

__all__ = ["MemoryService", "long_content_notice"]
