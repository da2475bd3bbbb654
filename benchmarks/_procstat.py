"""What a server process holds, read from /proc: open descriptors, RSS, CPU time."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def fd_count(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


def _status_kb(pid: int, field: str) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return float(line.split()[1])
    except OSError:
        pass
    return 0.0


def rss_mb(pid: int) -> float:
    return round(_status_kb(pid, "VmRSS") / 1024, 1)


def peak_rss_mb(pid: int) -> float:
    return round(_status_kb(pid, "VmHWM") / 1024, 1)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time the process used so far."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


class Sampler(threading.Thread):
    """The server's open descriptors every `every` seconds (for the peak), and every
    `timeline_every` seconds a timeline row: seconds since start, fds, RSS and what `extra`
    reports (progress of the run)."""

    def __init__(self, pid: int, every: float = 0.1, timeline_every: float = 10.0,
                 extra: Callable[[], dict[str, Any]] | None = None) -> None:
        super().__init__(daemon=True)
        self.pid, self.every, self.timeline_every = pid, every, timeline_every
        self.extra = extra or dict
        self.samples: list[int] = []
        self.timeline: list[dict[str, Any]] = []
        self.stop = threading.Event()

    def count(self) -> int:
        return fd_count(self.pid)

    def _row(self, started: float) -> dict[str, Any]:
        return {"t_s": round(time.monotonic() - started, 1), "fds": self.count(),
                "rss_mb": rss_mb(self.pid), **self.extra()}

    def run(self) -> None:
        started = time.monotonic()
        next_row = started
        while not self.stop.is_set():
            self.samples.append(self.count())
            if time.monotonic() >= next_row:
                self.timeline.append(self._row(started))
                next_row += self.timeline_every
            self.stop.wait(self.every)
        self.timeline.append(self._row(started))  # the state at the end
