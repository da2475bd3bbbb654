"""Transport costs and robustness through the real servers (issue 3's performance targets).

1. REST recall latency (a `tinycontext rest` process, HTTP keep-alive) against the same recalls
   made in-process through the library, on a store of `--size` memories (default 5,000).
2. MCP stdio cold start: from spawning `tinycontext` to the first successful recall answer.
3. A soak: `--clients` MCP clients (default 8) over Streamable HTTP for `--soak` seconds
   (default 60), each saving and recalling in a loop; afterwards every acknowledged save must
   be in the store and no request may have failed.
4. Load (issue 15): on a store of `--load-size` memories (default 20,000), `--clients`
   concurrent clients for `--load-seconds` (default 60) alternate a save of `--load-batch` (5)
   memories with a recall, through each of `--load-paths` (mcp = the official client's
   default connect mode, mcp-legacy = initialize handshake and a session, rest, library =
   in-process from threads, the engine's ceiling without a transport); calls/s,
   p50/p95/p99 by kind, errors and lost saves. `--server-arg` passes options to
   `tinycontext serve` (e.g. `--server-arg=--json-response`); `--store-cache` keeps the
   built store. `--parts overhead` runs the same clients calling only get_memory of one id
   (`--overhead-seconds`, default 10): the server CPU per call that the transport costs.

    python benchmarks/benchmark_transports.py
    python benchmarks/benchmark_transports.py --size 1000 --soak 10 --json-out out.json
    python benchmarks/benchmark_transports.py --parts load --store-cache /tmp/tc-20k.db
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import (  # noqa: E402
    Progress,
    add_common_arguments,
    batched,
    machine_info,
    machine_line,
    make_service,
    print_table,
    throwaway_dir,
    write_json,
)
from benchmarks._load import run_library, run_load  # noqa: E402
from benchmarks.metrics import percentile  # noqa: E402
from benchmarks.synthetic import memory_texts, questions, take  # noqa: E402


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _env(db: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TINYCONTEXT_", "OTEL_"))}
    env.update(TINYCONTEXT_MEMORY_DB_PATH=str(db),
               TINYCONTEXT_CONFIG_FILE=str(db.parent / "no-config.json"))
    return env


def _command() -> list[str]:
    script = Path(sys.executable).parent / "tinycontext"
    return [str(script)] if script.exists() else [sys.executable, "-m", "tinycontext"]


class Server:
    """`tinycontext serve|rest` on a free loopback port, stopped on exit."""

    def __init__(self, kind: str, db: Path, extra: list[str] | None = None) -> None:
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [*_command(), kind, "--port", str(self.port), *(extra or [])], env=_env(db),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )

    def __enter__(self) -> Server:
        import httpx

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.base + "/health", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                time.sleep(0.05)
        raise SystemExit("server did not start")

    def __exit__(self, *exc: object) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def _stats(seconds: list[float]) -> dict[str, float]:
    ms = [s * 1000 for s in seconds]
    return {"p50_ms": percentile(ms, 50), "p95_ms": percentile(ms, 95), "n": len(ms)}


def rest_vs_library(db: Path, model: str, asks: list[str], progress: Progress) -> dict[str, Any]:
    import httpx

    service = make_service(db, model)
    for q in asks[:5]:
        service.recall_memories(q)
    local = []
    for q in asks:
        started = time.perf_counter()
        service.recall_memories(q)
        local.append(time.perf_counter() - started)
    service.close()
    progress("library recalls timed; starting the REST server")
    remote = []
    with Server("rest", db) as server, httpx.Client(base_url=server.base, timeout=30) as client:
        for q in asks[:5]:
            client.post("/recall_memories", json={"query": q}).raise_for_status()
        for q in asks:
            started = time.perf_counter()
            client.post("/recall_memories", json={"query": q}).raise_for_status()
            remote.append(time.perf_counter() - started)
    lib, rest = _stats(local), _stats(remote)
    return {"library": lib, "rest": rest, "p95_overhead_ms": rest["p95_ms"] - lib["p95_ms"]}


def stdio_cold_start(db: Path, runs: int) -> dict[str, Any]:
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    command = _command()
    params = StdioServerParameters(command=command[0], args=command[1:], env=_env(db))

    async def once() -> float:
        started = time.perf_counter()
        async with Client(params) as client:
            result = await client.call_tool("recall_memories", {"query": "what was decided?"})
            assert not result.is_error
            return time.perf_counter() - started

    times = [anyio.run(once) for _ in range(runs)]
    return {"median_s": sorted(times)[len(times) // 2], "max_s": max(times), "runs": runs}


def soak(db: Path, clients: int, seconds: float) -> dict[str, Any]:
    import anyio
    from mcp import Client

    counts = {"saves": 0, "recalls": 0, "errors": 0}
    latencies: list[float] = []
    with Server("serve", db) as server:
        url = server.base + "/mcp"

        async def worker(number: int) -> None:
            async with Client(url) as client:
                end, i = time.monotonic() + seconds, 0
                while time.monotonic() < end:
                    i += 1
                    try:
                        saved = await client.call_tool("save_memories", {"memories": [
                            {"content": f"Soak client {number} fact {i}: ticket {number}-{i}."}]})
                        started = time.perf_counter()
                        recalled = await client.call_tool("recall_memories",
                                                          {"query": f"ticket {number}-{i}"})
                        latencies.append(time.perf_counter() - started)
                    except Exception:  # noqa: BLE001 - a transport failure is a soak failure
                        counts["errors"] += 1
                        continue
                    if saved.is_error or recalled.is_error:
                        counts["errors"] += 1
                        continue
                    counts["saves"] += len(json.loads(saved.content[0].text)["saved"])
                    counts["recalls"] += 1

        async def main() -> int:
            async with anyio.create_task_group() as group:
                for number in range(clients):
                    group.start_soon(worker, number)
            async with Client(url) as client:
                text = (await client.call_tool("list_memories", {"limit": 1})).content[0].text
                return int(text.split('total_count="', 1)[1].split('"', 1)[0])

        stored = anyio.run(main)
    return {**counts, "stored": stored, "lost": counts["saves"] - stored,
            "recall": _stats(latencies), "clients": clients, "seconds": seconds}


def build_store(db: Path, size: int, model: str, progress: Progress) -> None:
    service = make_service(db, model)
    for n, batch in enumerate(batched(take(memory_texts(), size), 32)):
        service.save_memories([{"content": text} for text in batch])
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_common_arguments(parser)
    parser.add_argument("--size", type=int, default=5000, help="memories in the latency store")
    parser.add_argument("--queries", type=int, default=200, help="recalls per measurement")
    parser.add_argument("--cold-runs", type=int, default=5, help="stdio cold starts to time")
    parser.add_argument("--clients", type=int, default=8, help="concurrent soak clients")
    parser.add_argument("--soak", type=float, default=60.0, help="soak duration in seconds")
    parser.add_argument("--parts", default="rest,cold,soak,load",
                        help="comma-separated: overhead, load, and rest,cold,soak (these three "
                        "run together)")
    parser.add_argument("--overhead-seconds", type=float, default=10.0,
                        help="duration per path of the overhead part (get_memory calls only)")
    parser.add_argument("--load-size", type=int, default=20000, help="memories in the load store")
    parser.add_argument("--load-seconds", type=float, default=60.0, help="load duration per path")
    parser.add_argument("--load-batch", type=int, default=5, help="memories per load save call")
    parser.add_argument("--load-paths", default="mcp,mcp-legacy,rest",
                        help="comma-separated: mcp (client mode auto), mcp-legacy, rest, "
                        "library (the same mix in-process from threads: the engine's ceiling)")
    parser.add_argument("--server-arg", action="append", default=[],
                        help="an option for the MCP server's command line (repeatable), "
                        "e.g. --server-arg=--json-response")
    parser.add_argument("--store-cache", metavar="PATH",
                        help="the load store: built here once, copied for each run")
    args = parser.parse_args()
    progress = Progress("transports", args.quiet)
    results: dict[str, Any] = {}
    parts = set(args.parts.split(","))
    with throwaway_dir("transports") as folder:
        if "overhead" in parts:
            results["overhead"] = load(folder, args, progress, overhead=True)
        if "load" in parts:
            results["load"] = load(folder, args, progress)
        if not parts & {"rest", "cold", "soak"}:
            print(machine_line(machine_info()))
            if "overhead" in results:
                print_overhead(results["overhead"])
            if "load" in results:
                print_load(results["load"])
            write_json(args.json_out, "transports", args, results)
            return
        db = folder / "latency.db"
        service = make_service(db, args.model)
        for batch in batched(take(memory_texts(), args.size), 32):
            service.save_memories([{"content": text} for text in batch])
        service.close()
        progress(f"store of {args.size} memories built")
        results["rest_vs_library"] = rest_vs_library(db, args.model, questions(args.queries),
                                                     progress)
        results["stdio_cold_start"] = stdio_cold_start(db, args.cold_runs)
        progress("cold starts timed; soaking")
        results["soak"] = soak(folder / "soak.db", args.clients, args.soak)
    r, c, s = results["rest_vs_library"], results["stdio_cold_start"], results["soak"]
    print(machine_line(machine_info()))
    lib, rest = r["library"], r["rest"]
    print_table(["measure", "value"], [
        ["library recall p50 / p95 (ms)", f"{lib['p50_ms']:.1f} / {lib['p95_ms']:.1f}"],
        ["REST recall p50 / p95 (ms)", f"{rest['p50_ms']:.1f} / {rest['p95_ms']:.1f}"],
        ["REST p95 overhead (ms, target <= 10)", f"{r['p95_overhead_ms']:.1f}"],
        ["stdio start -> first recall median / max (s, target < 2.5)",
         f"{c['median_s']:.2f} / {c['max_s']:.2f}"],
        [f"soak {s['clients']} clients x {s['seconds']:.0f} s: saves / recalls / errors",
         f"{s['saves']} / {s['recalls']} / {s['errors']}"],
        ["soak saves missing from the store afterwards", s["lost"]],
        ["soak recall p50 / p95 under load (ms)",
         f"{s['recall']['p50_ms']:.1f} / {s['recall']['p95_ms']:.1f}"],
    ], title=f"Transports ({args.size} memories, model {args.model})")
    if "overhead" in results:
        print_overhead(results["overhead"])
    if "load" in results:
        print_load(results["load"])
    write_json(args.json_out, "transports", args, results)


if __name__ == "__main__":
    main()
