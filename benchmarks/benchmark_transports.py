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
   `tinycontext serve` (e.g. `--server-arg=--sse`); `--store-cache` keeps the
   built store. `--parts overhead` runs the same clients calling only get_memory of one id
   (`--overhead-seconds`, default 10): the server CPU per call that the transport costs.

    python benchmarks/benchmark_transports.py
    python benchmarks/benchmark_transports.py --size 1000 --soak 10 --json-out out.json
    python benchmarks/benchmark_transports.py --parts load --store-cache /tmp/tc-20k.db
"""

from __future__ import annotations

import argparse
import json
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
from benchmarks._load_suite import load, print_load, print_overhead  # noqa: E402
from benchmarks._servers import Server, _command, _env  # noqa: E402
from benchmarks.metrics import percentile  # noqa: E402
from benchmarks.synthetic import memory_texts, questions, take  # noqa: E402


def _stats(seconds: list[float]) -> dict[str, float]:
    ms = [s * 1000 for s in seconds]
    return {"p50_ms": percentile(ms, 50), "p95_ms": percentile(ms, 95), "n": len(ms)}


def rest_vs_library(db: Path, model: str, asks: list[str], progress: Progress) -> dict[str, Any]:
    import httpx

    service = make_service(db, model)
    for q in asks[:5]:
        service.recall(q)
    local = []
    for q in asks:
        started = time.perf_counter()
        service.recall(q)
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
                        "e.g. --server-arg=--sse")
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
            service.save([{"content": text} for text in batch])
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
