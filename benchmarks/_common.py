"""Shared plumbing for the benchmark scripts: isolated stores, progress, tables, JSON, RSS."""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import platform
import resource
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
MODEL_CHOICES = ("balanced", "fast", "hash")


_START: dict[str, Any] = {}


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    _START.setdefault("git_revision", git_revision())  # the engine code this run imports
    _START.setdefault("time", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    _START.setdefault("load_average", [round(x, 2) for x in os.getloadavg()]
                      if hasattr(os, "getloadavg") else None)
    parser.add_argument(
        "--model", default="balanced",
        help="embedding model: a preset (balanced = the default, fast), a model directory, or "
        "'hash' (the deterministic test fake: a smoke run of the harness, not a real figure)",
    )
    parser.add_argument(
        "--set", metavar="KEY=VALUE", action="append", default=[], dest="settings",
        help="override an engine setting for this run, e.g. --set recall_dense_weight=0.3 "
        "(repeatable; any TinyContextConfig key)",
    )
    parser.add_argument("--json-out", metavar="PATH", help="also write the results as JSON here")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


def settings(args: argparse.Namespace) -> dict[str, Any]:
    """The --set KEY=VALUE overrides as config keyword arguments (JSON values where they parse)."""
    out: dict[str, Any] = {}
    for item in getattr(args, "settings", []) or []:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise SystemExit(f"--set expects KEY=VALUE, got {item!r}")
        try:
            out[key.strip()] = json.loads(raw)
        except json.JSONDecodeError:
            out[key.strip()] = raw
    return out


class Progress:
    """Progress lines on stderr (stdout carries only the result table)."""

    def __init__(self, name: str, quiet: bool = False, every: float = 2.0) -> None:
        self.name, self.quiet, self.every = name, quiet, every
        self.start = time.perf_counter()
        self._last = 0.0

    def __call__(self, message: str, force: bool = True) -> None:
        now = time.perf_counter()
        if self.quiet or (not force and now - self._last < self.every):
            return
        self._last = now
        print(f"[{self.name} {now - self.start:7.1f}s] {message}", file=sys.stderr, flush=True)

    def tick(self, message: str) -> None:
        """A rate-limited progress line (at most one per `every` seconds)."""
        self(message, force=False)


@contextlib.contextmanager
def throwaway_dir(prefix: str) -> Iterator[Path]:
    """A temporary directory for an isolated store; removed afterwards. Never the user's store."""
    with tempfile.TemporaryDirectory(prefix=f"tinycontext-bench-{prefix}-") as folder:
        yield Path(folder)


class RecordingEmbedder:
    """Wraps an embedder and keeps the vectors of its latest call (to mirror what got stored)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.last: list[bytes] = []
        self.seconds = 0.0
        self.calls = 0

    @property
    def model_key(self) -> str:
        return str(self.inner.model_key)

    @property
    def dimensions(self) -> int:
        return int(self.inner.dimensions)

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        started = time.perf_counter()
        vectors = list(self.inner.embed(texts))
        self.seconds += time.perf_counter() - started
        self.calls += 1
        self.last = vectors
        return vectors

    @property
    def has_tokens(self) -> bool:
        """Passes the wrapped model's token states through (late interaction stays on)."""
        return bool(getattr(self.inner, "has_tokens", False))

    def embed_with_tokens(self, texts: Sequence[str], drop_stopwords: bool) -> list[Any]:
        started = time.perf_counter()
        made = list(self.inner.embed_with_tokens(texts, drop_stopwords))
        self.seconds += time.perf_counter() - started
        self.calls += 1
        self.last = [vector for vector, _ in made]
        return made


def make_embedder(model: str, models_dir: Path, batch_size: int = 32) -> Any:
    """The embedder the default service would use for `model` (or the test fake for 'hash')."""
    if model == "hash":
        from tinycontext.testing import HashEmbedder

        return HashEmbedder(dimensions=384, key="hash-384")
    return _model_embedder(model, str(models_dir), batch_size)


@functools.cache
def _model_embedder(model: str, models_dir: str, batch_size: int) -> Any:
    """One load per model choice in a benchmark process (each service's container loads its
    own model, so the benchmark keeps the one it took)."""
    from tinycontext import TinyContextConfig, build_service
    from tinycontext.testing import InMemoryStore

    # The default service's own embedder, taken from a service over an in-memory store so
    # that no file is opened for it (closing the service leaves the model loaded).
    config = TinyContextConfig(embedding_model=model, models_dir=str(models_dir),
                               embedding_batch_size=batch_size)
    service = build_service(config, store=InMemoryStore(), background=False)
    service.close()
    return service.embedder


def make_config(db_path: Path, model: str, **overrides: Any) -> Any:
    from tinycontext import TinyContextConfig

    return TinyContextConfig(
        memory_db_path=str(db_path),
        models_dir=str(db_path.parent / "models"),
        embedding_model="balanced" if model == "hash" else model,
        **overrides,
    )


def make_service(db_path: Path, model: str, embedder: Any = None, clock: Any = None,
                 background: bool = True, **overrides: Any) -> Any:
    """A MemoryService on a fresh store at db_path, wired like the default one.

    The real embedder and tokenizer are used unless `model` is 'hash'; `embedder` lets a
    script wrap the embedder (e.g. RecordingEmbedder) without changing what it computes;
    `clock` replaces the system clock (what created_at reads); `background` False: no
    background re-embedding or index upkeep (a bulk load runs the upkeep itself).
    """
    from tinycontext import build_service

    config = make_config(db_path, model, **overrides)
    if embedder is None:
        embedder = make_embedder(model, Path(config.models_dir), config.embedding_batch_size)
    return build_service(config, embedder=embedder, clock=clock, background=background)


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MiB."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):  # this image only, unlike ru_maxrss after fork+exec
                return int(line.split()[1]) / 1024.0
    usage = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return usage / 1024.0 if sys.platform != "darwin" else usage / (1024.0 * 1024.0)


def current_rss_mb() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float("nan")


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_info() -> dict[str, Any]:
    """What the figures were measured on."""
    versions: dict[str, str] = {}
    from importlib import metadata

    for dist in ("tinysuite-context", "onnxruntime", "sqlite-vec", "sqlean.py", "numpy"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = "-"
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    memory_gb = float("nan")
    with contextlib.suppress(OSError, ValueError, IndexError):
        first = Path("/proc/meminfo").read_text().splitlines()[0]
        memory_gb = round(int(first.split()[1]) / 1024 / 1024, 1)
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return {
        "git_revision": git_revision(),
        "load_average_1_5_15": [round(x, 2) for x in load],
        "cpu": cpu_model(),
        "cores": cores,
        "memory_gb": memory_gb,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": versions,
    }


def git_revision() -> str:
    """The commit the engine was measured at (with '+dirty' for uncommitted changes)."""
    import subprocess

    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO_ROOT,
                              capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=REPO_ROOT, capture_output=True, text=True,
                               timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{head}{'+dirty' if dirty else ''}" if head else "unknown"


def machine_line(info: dict[str, Any]) -> str:
    return (
        f"{info['cpu']}, {info['cores']} cores, {info['memory_gb']} GB RAM, "
        f"Python {info['python']}, onnxruntime {info['packages']['onnxruntime']}, "
        f"load average {info['load_average_1_5_15'][0]:.2f}"
    )


def warn_if_busy(progress: Progress) -> None:
    """Timings mean little on a busy machine: say so before starting."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    cores = machine_info()["cores"] or 1
    if load > 0.5 * cores:
        progress(f"WARNING: load average {load:.2f} on {cores} cores - other work is running, "
                 "timings will be pessimistic")


def format_cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if value != value:  # NaN
            return "-"
        return f"{value:,.1f}" if abs(value) >= 100 else f"{value:.2f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def pct(value: float | None) -> str | None:
    """A 0..1 share as a percentage with one decimal, as the published anchors are given."""
    return None if value is None else f"{100 * value:.1f}"


def render_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], title: str = "") -> str:
    """A Markdown table (pastes straight into docs), columns padded for the terminal."""
    cells = [[format_cell(v) for v in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))

    def line(values: Sequence[str]) -> str:
        return "| " + " | ".join(v.ljust(widths[i]) for i, v in enumerate(values)) + " |"

    out = [f"\n{title}\n"] if title else []
    out.append(line(list(headers)))
    out.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    out.extend(line(row) for row in cells)
    return "\n".join(out)


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], title: str = "") -> None:
    print(render_table(headers, rows, title), flush=True)


def write_json(path: str | None, name: str, args: argparse.Namespace, results: Any) -> None:
    if not path:
        return
    payload = {
        "benchmark": name,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
        "started": _START,
        "machine": machine_info(),
        "params": {k: v for k, v in vars(args).items() if k != "json_out"},
        "results": results,
    }
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(payload, indent=2, default=str) + "\n", encoding="utf-8")
    print(f"results written to {target}", file=sys.stderr)


def parse_sizes(text: str) -> list[int]:
    """'100,1000,5k' -> [100, 1000, 5000], sorted and unique."""
    sizes: set[int] = set()
    for part in text.split(","):
        part = part.strip().lower().replace("_", "")
        if not part:
            continue
        factor = 1000 if part.endswith("k") else 1
        value = int(float(part.rstrip("k")) * factor)
        if value < 0:
            raise argparse.ArgumentTypeError("sizes must not be negative")
        sizes.add(value)
    if not sizes:
        raise argparse.ArgumentTypeError("give at least one size")
    return sorted(sizes)


def batched(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
