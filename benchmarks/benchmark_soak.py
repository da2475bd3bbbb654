"""Memory soak: one process saves for --minutes while its resident memory is sampled.

A long-running server must not grow without bound. This saves memories (one per call by
default, like an agent) for `--minutes` (default 10) in one process, through the library's
MemoryService (`--via service`, the default) or through a `tinycontext serve` process over
Streamable HTTP MCP (`--via http`), and samples the process's RSS every `--every` seconds.

What is expected to grow is the in-memory vector mirror (adapters/sqlite/mirror.py: sign bits,
int8 codes and a slot map per memory) and SQLite's page cache up to its bound. In service mode
each sample also shows what holds the memory: the mirror's arrays, SQLite's own allocations
(sqlite3_memory_used), glibc's heap in use and free-but-kept (mallinfo2) and Python's
allocated blocks; `--tracemalloc` adds the Python allocation sites that grew most.

    python benchmarks/benchmark_soak.py --json-out benchmarks/results/soak.json
    python benchmarks/benchmark_soak.py --minutes 2 --via http
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import (  # noqa: E402
    Progress,
    add_common_arguments,
    machine_info,
    machine_line,
    make_service,
    print_table,
    settings,
    throwaway_dir,
    warn_if_busy,
    write_json,
)
from benchmarks._memory_probes import (  # noqa: E402
    mallinfo,
    mirror_mb,
    sqlite_memory,
    status_mb,
)

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "locomo10.json"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="how long to save (10)")
    parser.add_argument("--every", type=float, default=10.0, help="seconds between samples (10)")
    parser.add_argument("--via", choices=("service", "http"), default="service",
                        help="save through the library in this process (default) or through "
                        "a `tinycontext serve` subprocess over MCP (its RSS is sampled)")
    parser.add_argument("--batch", type=int, default=1, help="memories per save call (1)")
    parser.add_argument("--clients", type=int, default=1,
                        help="http: MCP clients saving at once, each in its own session (1)")
    parser.add_argument("--warmup", type=int, default=200,
                        help="saves before the first sample (model loaded, caches primed)")
    parser.add_argument("--no-heap-trim", action="store_true",
                        help="http: run the server without returning freed heap to the OS "
                        "(adapters/heap.py), to compare")
    parser.add_argument("--tracemalloc", action="store_true",
                        help="service mode: trace Python allocations (slower) and list the "
                        "sites that grew most")
    parser.add_argument("--seed", type=int, default=7, help="seed of the generated texts")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA,
                        help=f"LoCoMo file the texts' vocabulary is learnt from ({DEFAULT_DATA})")
    add_common_arguments(parser)
    args = parser.parse_args(argv)
    if not args.data.is_file():
        parser.error(f"LoCoMo data not found at {args.data}: pass --data PATH")
    if args.minutes <= 0 or args.every <= 0 or args.batch < 1 or args.clients < 1:
        parser.error("--minutes and --every must be positive, --batch and --clients at least 1")
    return args


def texts(args: argparse.Namespace) -> Iterator[str]:
    from benchmarks.realistic import RealisticText

    # Not distinct: remembering every text would grow this process's own memory.
    return RealisticText(args.data).memory_texts(args.seed, distinct=False)


def soak_service(args: argparse.Namespace, db: Path, progress: Progress) -> dict[str, Any]:
    import tracemalloc

    if args.tracemalloc:
        tracemalloc.start(12)
    service = make_service(db, args.model, **settings(args))
    heap, sqlite = mallinfo(), sqlite_memory()
    stream = texts(args)
    counts = {"saves": 0, "saved": 0, "skipped": 0}

    def save() -> None:
        result = service.save([{"content": next(stream)} for _ in range(args.batch)]).to_dict()
        counts["saves"] += 1
        counts["saved"] += len(result["saved"])
        counts["skipped"] += len(result.get("skipped_duplicates", []))

    def sample() -> dict[str, Any]:
        row: dict[str, Any] = {**status_mb(), "mirror_mb": mirror_mb(service),
                               "python_blocks": sys.getallocatedblocks()}
        if sqlite is not None:
            row["sqlite_mb"] = sqlite()
        if heap is not None:
            row.update(heap())
        return row

    for _ in range(args.warmup):
        save()
    before = tracemalloc.take_snapshot() if args.tracemalloc else None
    samples = run_loop(args, save, sample, counts, progress)
    grew: list[str] = []
    if before is not None:
        stats = tracemalloc.take_snapshot().compare_to(before, "lineno")
        grew = [str(s) for s in stats[:15]]
        tracemalloc.stop()
    service.close()
    return {"samples": samples, "counts": counts, "tracemalloc_top": grew}


def soak_http(args: argparse.Namespace, db: Path, progress: Progress) -> dict[str, Any]:
    """Saves through MCP over HTTP to a `tinycontext serve` whose own sampler thread
    (benchmarks/_soak_server.py) records what the server process holds."""
    import json
    import socket

    import anyio
    import httpx
    from mcp import Client

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TINYCONTEXT_", "OTEL_"))}
    env.update(TINYCONTEXT_MEMORY_DB_PATH=str(db),
               TINYCONTEXT_CONFIG_FILE=str(db.parent / "no-config.json"),
               TINYCONTEXT_MODELS_DIR=str(db.parent / "models"))
    env.update({f"TINYCONTEXT_{k.upper()}": str(v) for k, v in settings(args).items()})
    if args.model != "balanced":
        env["TINYCONTEXT_EMBEDDING_MODEL"] = args.model
    samples_file = db.parent / "server-samples.jsonl"
    server = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("_soak_server.py")), str(samples_file),
         str(args.every), *(["--no-heap-trim"] if args.no_heap_trim else []), "serve",
         "--port", str(port)],
        env=env, stdout=subprocess.DEVNULL, stderr=(db.parent / "server.log").open("w"))
    base = f"http://127.0.0.1:{port}"
    counts = {"saves": 0, "saved": 0, "skipped": 0}
    progress_at: list[tuple[float, int]] = []  # (wall time, memories saved by then)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(base + "/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("the tinycontext serve process did not start") from None
                time.sleep(0.1)
        stream = texts(args)

        async def client(ready: Any) -> None:
            async with Client(base + "/mcp") as mcp:
                while True:  # until the soak's deadline cancels it
                    memories = [{"content": next(stream)} for _ in range(args.batch)]
                    result = await mcp.call_tool("save_memories", {"memories": memories})
                    if result.is_error:
                        raise SystemExit(f"save failed: {result.content[0].text}")
                    body = json.loads(result.content[0].text)
                    counts["saves"] += 1
                    counts["saved"] += len(body["saved"])
                    counts["skipped"] += len(body.get("skipped_duplicates", []))
                    if counts["saves"] >= args.warmup:
                        ready.set()
                    now = time.time()
                    if not progress_at or now - progress_at[-1][0] >= 0.5:
                        progress_at.append((now, counts["saved"]))

        async def main() -> float:
            ready = anyio.Event()
            async with anyio.create_task_group() as group:
                for _ in range(args.clients):
                    group.start_soon(client, ready)
                await ready.wait()
                warmed = time.time()
                progress(f"{args.warmup} saves of warm-up done; soaking")
                group.cancel_scope.deadline = anyio.current_time() + 60 * args.minutes
                while True:  # progress lines while the clients save
                    await anyio.sleep(args.every)
                    progress(f"{counts['saved']:,} memories saved")
            return warmed

        warmed = anyio.run(main)
        time.sleep(args.every + 1)  # one last server sample after the final save
    finally:
        server.terminate()
        server.wait(timeout=60)
    samples = _match(samples_file, progress_at, warmed) if samples_file.exists() else []
    if len(samples) < 2:
        log = (db.parent / "server.log").read_text(errors="replace")[-3000:]
        raise SystemExit(f"the server's sampler wrote too few samples; its log ends:\n{log}")
    return {"samples": samples, "counts": counts, "tracemalloc_top": []}


def _match(path: Path, progress_at: list[tuple[float, int]],
           warmed: float) -> list[dict[str, Any]]:
    """The server's samples from the end of warm-up on, each with the memories saved by then."""
    import bisect
    import json

    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    times = [t for t, _ in progress_at]
    out = []
    for row in rows:
        if row["time"] < warmed:
            continue
        at = bisect.bisect_right(times, row["time"]) - 1
        if at < 0:
            continue
        out.append({"seconds": round(row.pop("time") - warmed, 1),
                    "memories": progress_at[at][1], **row})
    return out


def _record(samples: list[dict[str, Any]], started: float, counts: dict[str, int],
            row: dict[str, Any], progress: Progress) -> None:
    row = {"seconds": round(time.monotonic() - started, 1), "memories": counts["saved"], **row}
    samples.append(row)
    progress(f"{row['memories']:,} memories saved, RSS {row['rss_mb']:.0f} MB"
             + (f", mirror {row['mirror_mb']:.1f} MB" if row.get("mirror_mb") else ""))


def run_loop(args: argparse.Namespace, save: Callable[[], None],
             sample: Callable[[], dict[str, Any]], counts: dict[str, int],
             progress: Progress) -> list[dict[str, Any]]:
    samples: list[dict[str, Any]] = []
    started = time.monotonic()
    end, due = started + 60 * args.minutes, started
    while True:
        now = time.monotonic()
        if now >= due or now >= end:
            _record(samples, started, counts, sample(), progress)
            due += args.every
            if now >= end:
                return samples
        save()


def summary(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """Growth from the first sample to the last, per 10,000 memories saved in between."""
    first, last = samples[0], samples[-1]
    added = last["memories"] - first["memories"]
    out: dict[str, Any] = {"memories_start": first["memories"], "memories_end": last["memories"],
                           "rss_start_mb": first["rss_mb"], "rss_end_mb": last["rss_mb"],
                           "rss_peak_mb": max(s["rss_mb"] for s in samples)}
    for key in ("rss_mb", "anon_mb", "file_mb", "mirror_mb", "sqlite_mb", "heap_used_mb",
                "heap_free_mb"):
        if first.get(key) is not None and last.get(key) is not None and added > 0:
            out[f"{key[:-3]}_mb_per_10k"] = (last[key] - first[key]) / added * 10_000
    if "mirror_mb_per_10k" in out:
        out["rss_minus_mirror_mb_per_10k"] = out["rss_mb_per_10k"] - out["mirror_mb_per_10k"]
    if added > 0:  # the second half alone: still growing, or flattened out?
        middle = min(samples, key=lambda s: abs(s["memories"] - (first["memories"] + added / 2)))
        late = last["memories"] - middle["memories"]
        if late > 0:
            out["late_rss_mb_per_10k"] = (last["rss_mb"] - middle["rss_mb"]) / late * 10_000
    return out


COLUMNS = ("seconds", "memories", "rss_mb", "anon_mb", "file_mb", "mirror_mb", "sqlite_mb",
           "heap_used_mb", "heap_free_mb", "python_blocks")


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    progress = Progress("soak", args.quiet)
    warn_if_busy(progress)
    run = soak_service if args.via == "service" else soak_http
    with throwaway_dir("soak") as folder:
        result = run(args, folder / "memories.db", progress)
    samples = result["samples"]
    shown = [c for c in COLUMNS if any(s.get(c) is not None for s in samples)]
    step = max(1, len(samples) // 20)  # about 20 rows on screen; the JSON keeps every sample
    rows = [[s.get(c) for c in shown] for s in samples[::step]]
    if samples[-1] is not samples[::step][-1]:
        rows.append([samples[-1].get(c) for c in shown])
    print_table(shown, rows, f"RSS while saving ({args.via}, {args.batch} per save; "
                f"{machine_line(machine_info())})")
    found = summary(samples)
    print_table(["figure", "value"], [[k, v] for k, v in found.items()])
    counts = result["counts"]
    print(f"\n{counts['saves']:,} saves, {counts['saved']:,} memories stored, "
          f"{counts['skipped']:,} skipped as duplicates.")
    for line in result["tracemalloc_top"]:
        print(line)
    write_json(args.json_out, "soak", args, {**result, "summary": found,
                                             "malloc_env": {k: v for k, v in os.environ.items()
                                                            if k.startswith("MALLOC_")}})


if __name__ == "__main__":
    main()
