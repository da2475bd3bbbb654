"""Where a process's memory is, for the soak benchmark (benchmark_soak.py and the server it
runs, _soak_server.py): VmRSS and its anonymous and file-backed parts, glibc's heap, SQLite's
own allocations and the bytes the vector mirrors hold (read from their private fields:
measurement only)."""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

MB = 1024 * 1024


def adapter(name: str, flat: str) -> Any:
    """An adapter module by its package path (adapters/sqlite/driver.py), or by the flat name
    of layouts before the adapters were grouped (adapters/sqlite_driver.py)."""
    import importlib

    try:
        return importlib.import_module(f"tinycontext.adapters.{name}")
    except ModuleNotFoundError:
        return importlib.import_module(f"tinycontext.adapters.{flat}")


def status_mb(pid: int | str = "self") -> dict[str, float]:
    """VmRSS and its anonymous / file-backed parts of a process, in MiB."""
    wanted = {"VmRSS": "rss_mb", "RssAnon": "anon_mb", "RssFile": "file_mb"}
    out: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key = line.split(":", 1)[0]
        if key in wanted:
            out[wanted[key]] = int(line.split()[1]) / 1024.0
    return out


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]


def mallinfo() -> Callable[[], dict[str, float]] | None:
    """glibc's heap figures (all arenas): in use and free-but-kept, in MiB; None elsewhere."""
    try:
        libc = ctypes.CDLL(None)
        call = libc.mallinfo2
    except (OSError, AttributeError):
        return None
    call.restype = _MallInfo2

    def read() -> dict[str, float]:
        info = call()
        return {"heap_used_mb": (info.uordblks + info.hblkhd) / MB,
                "heap_free_mb": info.fordblks / MB}

    return read


def sqlite_memory() -> Callable[[], float] | None:
    """sqlite3_memory_used() of the SQLite library the store runs on (page caches and all)."""
    module = adapter("sqlite.driver", "sqlite_driver").sqlite_module()
    native = sys.modules.get(f"{module.__name__}._sqlite3") or sys.modules.get("_sqlite3")
    try:
        call = ctypes.CDLL(native.__file__).sqlite3_memory_used  # type: ignore[union-attr]
    except (OSError, AttributeError):
        return None
    call.restype = ctypes.c_int64
    return lambda: call() / MB


def mirror_bytes(mirror: Any) -> int:
    """Resident bytes of one vector mirror: its filled slots (the arrays' spare capacity is
    zeroed memory never touched, so not resident) plus the slot map, a dict of int -> int
    (two 32-byte int objects an entry). Reads private fields: measurement only."""
    total = sys.getsizeof(mirror._pos) + 64 * len(mirror._pos)
    view = getattr(mirror, "_view", None)
    if view is not None:
        slot = (view.seqs.itemsize + view.kinds.itemsize + view.sessions.itemsize
                + view.bits.shape[0] * view.bits.itemsize
                + view.codes.shape[1] * view.codes.itemsize)
        total += slot * view.n
    return total


def mirror_mb(service: Any) -> float | None:
    mirrors = getattr(getattr(service.store, "_search", None), "_mirrors", None)
    if mirrors is None:
        return None
    return sum(mirror_bytes(m) for m in list(mirrors.values())) / MB
