"""Server processes give freed heap memory back to the OS (adapters/system/heap.py; the soak figures
are in docs/benchmarks.md): the trimmer runs in every server entry point, and trimming does
lower the RSS of a process whose heap is full of freed blocks."""

from __future__ import annotations

import ctypes
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.servers import cli_env

glibc = pytest.mark.skipif(not hasattr(ctypes.CDLL(None), "malloc_trim"),
                           reason="malloc_trim is glibc's")

FRAGMENT = """
import sys
from pathlib import Path
from tinycontext.adapters.system.heap import trim_free_heap

def rss():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024

blocks = [bytes(2000) for _ in range(100_000)]  # ~200 MB of heap blocks (not mmap-sized)
kept = blocks[::50]  # every 50th stays alive, so the heap cannot shrink from its top
del blocks
before = rss()
assert trim_free_heap()
print(before, rss())
"""


@glibc
def test_trimming_returns_free_heap_pages() -> None:
    done = subprocess.run([sys.executable, "-c", FRAGMENT], capture_output=True, text=True,
                          timeout=120, check=True)
    before, after = map(float, done.stdout.split())
    assert before - after > 100, (before, after)  # most of the ~200 MB freed comes back


THREADS = """
import sys, threading
from tinycontext.entry.cli import main
code = main(sys.argv[1:])
print(sorted(t.name for t in threading.enumerate()), file=sys.stderr)
raise SystemExit(code)
"""


@glibc
@pytest.mark.slow
def test_the_stdio_server_runs_the_trimmer(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", THREADS, "mcp"], input="",
                          capture_output=True, text=True, env=cli_env(tmp_path), timeout=120)
    assert done.returncode == 0, done.stderr
    assert "'tinycontext-heap-trim'" in done.stderr.strip().splitlines()[-1]


@glibc
def test_the_rest_app_process_runs_the_trimmer_once(tmp_path: Path) -> None:
    script = """
import threading
from tinycontext.rest import app_from_environment
app_from_environment(); app_from_environment()
print(sum(t.name == "tinycontext-heap-trim" for t in threading.enumerate()))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=cli_env(tmp_path), timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1"
