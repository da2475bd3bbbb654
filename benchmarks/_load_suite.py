"""benchmark_transports' load and overhead parts (issue 15): the store, the runs, tables."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from typing import Any

from benchmarks._common import Progress, batched, make_service, print_table
from benchmarks._load import run_library, run_load
from benchmarks._servers import Server
from benchmarks.synthetic import memory_texts, questions, take


def build_store(db: Path, size: int, model: str, progress: Progress) -> None:
    service = make_service(db, model)
    for n, batch in enumerate(batched(take(memory_texts(), size), 32)):
        service.save([{"content": text} for text in batch])
        progress.tick(f"building the store: {min(size, (n + 1) * 32)} / {size}")
    service.close()
    progress(f"store of {size} memories built")


def _copy_store(source: Path, target: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{source}{suffix}").exists():
            shutil.copyfile(f"{source}{suffix}", f"{target}{suffix}")


def load(folder: Path, args: argparse.Namespace, progress: Progress,
         overhead: bool = False) -> dict[str, Any]:
    """The issue-15 load on a `--load-size` store, through each of `--load-paths`; with
    `overhead`, get_memory calls only for `--overhead-seconds` (what the transport costs)."""
    template = Path(args.store_cache) if args.store_cache else folder / "template.db"
    if not template.exists():
        template.parent.mkdir(parents=True, exist_ok=True)
        build_store(template, args.load_size, args.model, progress)
    asks = questions(200)
    out: dict[str, Any] = {"store_size": args.load_size, "server_args": args.server_arg,
                           "runs": []}
    seconds = args.overhead_seconds if overhead else args.load_seconds
    for number, path in enumerate(args.load_paths.split(",")):
        if overhead and path == "library":
            continue
        db = folder / f"load-{number}.db"
        _copy_store(template, db)
        if path == "library":
            service = make_service(db, args.model)
            progress(f"load: in-process, {args.clients} threads x {args.load_seconds:.0f} s")
            run = run_library(service, clients=args.clients, seconds=seconds,
                              batch=args.load_batch, asks=asks)
            service.close()
            run["label"] = path
            out["runs"].append(run)
            continue
        kind = "rest" if path == "rest" else "serve"
        mode = "legacy" if path == "mcp-legacy" else "auto"
        with Server(kind, db, list(args.server_arg) if kind == "serve" else []) as server:
            progress(f"{'overhead' if overhead else 'load'}: {path}, {args.clients} clients x "
                     f"{seconds:.0f} s")
            run = run_load(server.base, "rest" if kind == "rest" else "mcp",
                           server_pid=server.process.pid, clients=args.clients,
                           seconds=seconds, batch=args.load_batch, asks=asks, mode=mode,
                           overhead=overhead)
        run["label"] = path
        out["runs"].append(run)
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
    return out


def print_overhead(result: dict[str, Any]) -> None:
    rows = [[r["label"], r["calls"], r["calls_per_s"], r["errors"],
             f"{r['get']['p50_ms']} / {r['get']['p95_ms']}",
             r["server_cpu_ms_per_call"], r["client_cpu_ms_per_call"],
             r["load_average_before"][0]] for r in result["runs"]]
    print_table(["path", "calls", "calls/s", "errors", "get p50 / p95 ms",
                 "server CPU ms/call", "client CPU ms/call", "load avg"], rows,
                title="Transport cost: get_memory of one id (the engine's part is one row read); "
                f"server args: {' '.join(result['server_args']) or '(defaults)'}")


def print_load(result: dict[str, Any]) -> None:
    rows = [[r["label"], r["calls"], r["calls_per_s"], r["errors"], r["lost"],
             f"{r['save']['p50_ms']} / {r['save']['p95_ms']}",
             f"{r['recall']['p50_ms']} / {r['recall']['p95_ms']}",
             f"{r['all']['p50_ms']} / {r['all']['p95_ms']} / {r['all']['p99_ms']}",
             f"{r['server_cpu_ms_per_call']} / {r['client_cpu_ms_per_call']}",
             r["load_average_before"][0]] for r in result["runs"]]
    print_table(["path", "calls", "calls/s", "errors", "lost saves", "save p50 / p95 ms",
                 "recall p50 / p95 ms", "all p50 / p95 / p99 ms",
                 "CPU ms/call server / clients", "load avg"], rows,
                title=f"Load: {result['runs'][0]['clients'] if result['runs'] else 0} clients, "
                f"saves of {result['runs'][0]['batch'] if result['runs'] else 0} + recalls on "
                f"{result['store_size']:,} memories; server args: "
                f"{' '.join(result['server_args']) or '(defaults)'}")
