"""`tinycontext` with a sampler thread: the server benchmark_soak.py runs for `--via http`.

    python benchmarks/_soak_server.py SAMPLES.jsonl EVERY [--no-heap-trim] serve --port 8123

Runs the installed `tinycontext` command's entry point with the remaining arguments, exactly
as the command would, while a daemon thread appends one JSON line every EVERY seconds to
SAMPLES.jsonl with what the soak reports for this process (RSS, glibc heap, SQLite, Python
blocks, mirror). The benchmark matches the lines to its saves by wall-clock time.
"""

from __future__ import annotations

import gc
import json
import sys
import threading
import time
import weakref
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._memory_probes import (  # noqa: E402
    adapter,
    mallinfo,
    mirror_bytes,
    sqlite_memory,
    status_mb,
)


def _retrievals(found: list[Any]) -> list[Any]:
    """The stores' search objects (which hold the mirrors), looked up once they exist."""
    alive = [r() for r in found if r() is not None]
    if alive:
        return alive
    retrieval = adapter("sqlite.search", "sqlite_search").Retrieval
    found[:] = [weakref.ref(o) for o in gc.get_objects() if isinstance(o, retrieval)]
    return [r() for r in found if r() is not None]


def sample_forever(path: Path, every: float) -> None:
    heap, sqlite, found = mallinfo(), None, []
    while True:
        time.sleep(every)
        try:
            row = _sample(heap, found)
            if sqlite is None and any(name in sys.modules for name in (
                    "tinycontext.adapters.sqlite.driver", "tinycontext.adapters.sqlite_driver")):
                sqlite = sqlite_memory()
            if sqlite is not None:
                row["sqlite_mb"] = sqlite()
        except Exception as exc:  # noqa: BLE001 - said on the server's stderr, sampling goes on
            print(f"soak sampler: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
            continue
        with path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(row) + "\n")


def _sample(heap: Any, found: list[Any]) -> dict[str, Any]:
    row: dict[str, Any] = {"time": time.time(), **status_mb(),
                           "python_blocks": sys.getallocatedblocks()}
    mirrors = [m for r in _retrievals(found) for m in list(r._mirrors.values())]
    row["mirror_mb"] = sum(mirror_bytes(m) for m in mirrors) / 1024 / 1024 if found else None
    if heap is not None:
        row.update(heap())
    return row


def main() -> int:
    path, every, argv = Path(sys.argv[1]), float(sys.argv[2]), sys.argv[3:]
    if argv[:1] == ["--no-heap-trim"]:  # the same server without adapters/heap.py's trimmer
        heap = adapter("system.heap", "heap")
        heap.start_heap_trimmer = lambda *_, **__: False
        argv = argv[1:]
    threading.Thread(target=sample_forever, args=(path, every), name="soak-sampler",
                     daemon=True).start()
    from importlib.metadata import entry_points

    (command,) = entry_points(group="console_scripts", name="tinycontext")
    return int(command.load()(argv))


if __name__ == "__main__":
    raise SystemExit(main())
