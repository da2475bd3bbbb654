"""Clock port: the only source of "now" for the engine."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol, runtime_checkable


@runtime_checkable
class Clock(Protocol):
    def now(self) -> datetime:
        """The current instant as a timezone-aware UTC datetime."""
        ...
