"""Giving freed heap memory back to the operating system in long-running server processes.

Measured with benchmarks/benchmark_soak.py (docs/benchmarks.md, "Memory over a long run"): a
server saving one memory per call kept growing although what it used did not. glibc's
malloc keeps freed memory inside its heaps for reuse, and a server churns through allocations
of every size (SQLite dropping and refilling its page cache whenever another connection
writes, model activations, numpy temporaries, the vector mirror's arrays when they double),
so the free space between live blocks grew to 70 MB and counted in RSS as if used.
`malloc_trim(0)` hands whole free pages inside the heaps back (the memory stays reserved
address space, nothing is moved); a few milliseconds every TRIM_SECONDS keeps RSS at what is
in use. Other C libraries (musl, macOS) return memory differently: there this is a no-op.
"""

from __future__ import annotations

import ctypes
import logging
import threading
from collections.abc import Callable

log = logging.getLogger("tinycontext.heap")

TRIM_SECONDS = 30.0

_lock = threading.Lock()
_started: threading.Thread | None = None


def _malloc_trim() -> Callable[[int], int] | None:
    try:
        trim = ctypes.CDLL(None).malloc_trim  # glibc only
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


def trim_free_heap() -> bool:
    """Return the heap's free pages to the OS now; False where the C library cannot."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


def start_heap_trimmer(seconds: float = TRIM_SECONDS) -> bool:
    """Trim every `seconds` on a daemon thread, once per process (later calls do nothing).
    False where the C library has no malloc_trim."""
    global _started
    trim = _malloc_trim()
    if trim is None:
        return False
    with _lock:
        if _started is not None:
            return True
        idle = threading.Event()  # never set: a sleep that is not a busy loop

        def run() -> None:
            while not idle.wait(seconds):
                try:
                    trim(0)
                except Exception as exc:  # noqa: BLE001 - never take the server down for this
                    log.warning("malloc_trim failed (%s); no longer trimming", exc)
                    return

        _started = threading.Thread(target=run, name="tinycontext-heap-trim", daemon=True)
        _started.start()
    return True
