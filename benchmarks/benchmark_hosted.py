"""Hosted multi-user mode under load (issues 4 and 15): many distinct users over HTTP.

A `tinycontext serve` (MCP, default) or `tinycontext rest` process runs in hosted mode on
loopback, trusting this process as its proxy. `--clients` concurrent clients work through
visits: a visit is one user saving `--saves` memories (one call each) and recalling
`--recalls` times with a question every user shares, so a leak between stores would show up
in the answers. With `--zipf S` (default 1.1) the visiting users are drawn from `--users`
with a Zipf skew (user k with weight 1/k^S; popular users come back, the tail arrives cold)
until `--seconds` have passed; `--zipf 0` visits every user once, in order.

Checked: zero errors, zero cross-user results (every recalled memory carries its owner's
marker), one store file per visited user, and the server's open file descriptors (sampled
from /proc/<pid>/fd) and RSS staying bounded by the open-store LRU rather than growing with
users (every 10 s into the JSON's timeline). Reported: p50/p95/p99 per request type, the
first call of a visit whose store the LRU had closed or never opened, throughput, peak fds,
server peak RSS; then, apart from the load, what opening a cold user store costs (p50/p95).

    python benchmarks/benchmark_hosted.py                     # 10,000 users, Zipf, MCP, 60 s
    python benchmarks/benchmark_hosted.py --transport rest --seconds 120
    python benchmarks/benchmark_hosted.py --zipf 0 --users 1000 --saves 5 --recalls 1
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._cold_open import measure as measure_cold_open  # noqa: E402
from benchmarks._common import (  # noqa: E402
    Progress,
    machine_info,
    machine_line,
    print_table,
    throwaway_dir,
    write_json,
)
from benchmarks._hosted_clients import (  # noqa: E402
    QUESTION,
    Tally,
    Visits,
    _mcp_worker,
    _rest_worker,
)
from benchmarks._procstat import Sampler, cpu_seconds, peak_rss_mb  # noqa: E402
from benchmarks.metrics import percentile  # noqa: E402


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _command() -> list[str]:
    script = Path(sys.executable).parent / "tinycontext"
    return [str(script)] if script.exists() else [sys.executable, "-m", "tinycontext"]


async def _drive(args: argparse.Namespace, base: str, token: str, tally: Tally,
                 progress: Progress, sampler: Sampler) -> float:
    visits = Visits(args.users, args.zipf, args.max_open_stores)
    worker = _mcp_worker if args.transport == "mcp" else _rest_worker
    started = time.perf_counter()
    deadline = time.monotonic() + (args.seconds if args.zipf > 0 else 10 ** 9)
    tasks = [asyncio.create_task(worker(base, token, visits, deadline, args, tally))
             for _ in range(args.clients)]
    while not all(t.done() for t in tasks):
        await asyncio.sleep(0.5)
        progress.tick(f"{tally.visits_done} visits, {len(tally.users_seen)} users, "
                      f"{len(tally.errors)} errors, {sampler.count()} fds")
    await asyncio.gather(*tasks)
    return time.perf_counter() - started


def _ms(values: list[float], q: float) -> float:
    return round(percentile(values, q) * 1000, 1) if values else 0.0


def _server_env(work: Path, token: str, secret: str, args: argparse.Namespace) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TINYCONTEXT_", "OTEL_"))}
    env.update(
        TINYCONTEXT_CONFIG_FILE=str(work / "no-config.json"),
        TINYCONTEXT_MEMORY_DB_PATH=str(work / "single" / "memories.db"),
        TINYCONTEXT_EMBEDDING_MODEL=args.model,
        TINYCONTEXT_TENANCY="proxy-header", TINYCONTEXT_TENANT_SECRET=secret,
        TINYCONTEXT_TENANT_STORE_DIR=str(work / "tenants"),
        TINYCONTEXT_TRUSTED_PROXY_CIDRS="127.0.0.1/32",
        TINYCONTEXT_TRUSTED_PROXY_TOKEN=token,
        TINYCONTEXT_MAX_OPEN_STORES=str(args.max_open_stores),
    )
    return env


def run(args: argparse.Namespace) -> dict[str, Any]:
    progress = Progress("hosted", args.quiet)
    token, secret = secrets.token_urlsafe(48), secrets.token_urlsafe(48)
    load_before = [round(x, 2) for x in os.getloadavg()]
    with throwaway_dir("hosted") as work:
        tenants = work / "tenants"
        tenants.mkdir(mode=0o700)
        port = _free_port()
        command = "serve" if args.transport == "mcp" else "rest"
        log = open(work / "server.log", "w")  # noqa: SIM115
        server = subprocess.Popen(
            [*_command(), command, "--host", "127.0.0.1", "--port", str(port),
             *args.server_arg], env=_server_env(work, token, secret, args),
            stdout=subprocess.DEVNULL, stderr=log)
        base = f"http://127.0.0.1:{port}"
        tally = Tally()
        try:
            _wait(base, server)
            sampler = Sampler(server.pid, extra=lambda: {
                "visits": tally.visits_done, "users_seen": len(tally.users_seen)})
            idle_fds, idle_rss = sampler.count(), peak_rss_mb(server.pid)
            cpu_before = cpu_seconds(server.pid)
            client_before = cpu_seconds(os.getpid())
            sampler.start()
            what = (f"Zipf {args.zipf} over {args.users} users for {args.seconds:.0f} s"
                    if args.zipf > 0 else f"{args.users} users once each")
            progress(f"{what}: visits of {args.saves} saves + {args.recalls} recalls, "
                     f"{args.clients} clients, {args.transport.upper()}")
            wall = asyncio.run(_drive(args, base, token, tally, progress, sampler))
            sampler.stop.set()
            sampler.join()
            rss = peak_rss_mb(server.pid)
            cpu = cpu_seconds(server.pid) - cpu_before
            client_cpu = cpu_seconds(os.getpid()) - client_before
            files = len(list(tenants.glob("*.db")))
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
            log.close()
        server_log = (work / "server.log").read_text()[-2000:]
        load_after = [round(x, 2) for x in os.getloadavg()]
        cold = {}
        if args.cold_samples > 0 and files:
            progress(f"cold opens: {min(files, args.cold_samples)} stores, apart from the load")
            cold = measure_cold_open(tenants, args.model, QUESTION, args.cold_samples)
    requests = len(tally.latency["save"]) + len(tally.latency["recall"])
    every = tally.latency["save"] + tally.latency["recall"]
    return {
        "transport": args.transport, "users": args.users, "zipf": args.zipf,
        "seconds": args.seconds, "saves_per_visit": args.saves,
        "recalls_per_visit": args.recalls, "clients": args.clients, "model": args.model,
        "max_open_stores": args.max_open_stores, "server_args": args.server_arg,
        "visits": tally.visits_done, "users_visited": len(tally.users_seen),
        "requests": requests, "errors": len(tally.errors), "error_examples": tally.errors[:5],
        "cross_user_results": tally.cross_user, "recalled_memories": tally.recalled,
        "recalls_with_own_colour_fact": tally.own_fact_found,
        "store_files": files, "wall_seconds": round(wall, 1),
        "requests_per_second": round(requests / wall, 1) if wall else 0.0,
        "latency_ms": {
            kind: {"p50": _ms(values, 50), "p95": _ms(values, 95), "p99": _ms(values, 99),
                   "count": len(values)}
            for kind, values in {**tally.latency, "all tool calls": every}.items() if values
        },
        "fds": {"idle": idle_fds, "peak": max(sampler.samples, default=0),
                "final": sampler.samples[-1] if sampler.samples else 0},
        "timeline_every_10s": sampler.timeline,
        "server_idle_rss_mb": idle_rss, "server_peak_rss_mb": rss,
        "server_cpu_ms_per_call": round(cpu * 1000 / requests, 1) if requests else 0.0,
        "client_cpu_ms_per_call": round(client_cpu * 1000 / requests, 1) if requests else 0.0,
        "cold_open": cold, "load_average_before": load_before, "load_average_after": load_after,
        "server_log_tail": server_log if tally.errors else "",
        "machine": machine_line(machine_info()),
    }


def _wait(base: str, server: subprocess.Popen[bytes], timeout: float = 60) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with {server.returncode}")
        try:
            if httpx.get(base + "/health", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise SystemExit("the server did not start")


def _report(result: dict[str, Any]) -> None:
    lat = result["latency_ms"]
    rows = [[kind, v["count"], v["p50"], v["p95"], v["p99"]] for kind, v in lat.items()]
    print_table(["request", "count", "p50 ms", "p95 ms", "p99 ms"], rows,
                title=f"Hosted mode, {result['transport'].upper()}: {result['visits']} visits of "
                f"{result['users_visited']} users (of {result['users']}, Zipf {result['zipf']}) "
                f"x ({result['saves_per_visit']} saves + {result['recalls_per_visit']} recalls),"
                f" {result['clients']} clients")
    fds, cold = result["fds"], result["cold_open"]
    rows = [
        ["errors", result["errors"]],
        ["cross-user results (by content)", result["cross_user_results"]],
        ["recalled memories checked", result["recalled_memories"]],
        ["recalls with the user's own colour fact", result["recalls_with_own_colour_fact"]],
        ["store files / users visited", f"{result['store_files']} / {result['users_visited']}"],
        ["throughput (tool calls/s)", result["requests_per_second"]],
        ["wall time (s)", result["wall_seconds"]],
        ["server fds idle / peak / final", f"{fds['idle']} / {fds['peak']} / {fds['final']}"],
        ["max open stores", result["max_open_stores"]],
        ["server RSS idle / peak (MB)",
         f"{result['server_idle_rss_mb']} / {result['server_peak_rss_mb']}"],
        ["fds, RSS MB every 10 s", ", ".join(f"{r['fds']}/{r['rss_mb']:.0f}"
                                             for r in result["timeline_every_10s"])],
        ["CPU per tool call, server / driver (ms)",
         f"{result['server_cpu_ms_per_call']} / {result['client_cpu_ms_per_call']}"],
        ["load average before / after",
         f"{result['load_average_before'][0]} / {result['load_average_after'][0]}"],
    ]
    if cold:
        rows += [[f"cold open ({cold['stores_sampled']} stores): first recall p50 / p95 ms",
                  f"{cold['first_recall_cold']['p50_ms']} / {cold['first_recall_cold']['p95_ms']}"],
                 ["  recall on the open store p50 / p95 ms",
                  f"{cold['recall_warm']['p50_ms']} / {cold['recall_warm']['p95_ms']}"],
                 ["  cold-open cost (difference) p50 / p95 ms",
                  f"{cold['cold_open_cost']['p50_ms']} / {cold['cold_open_cost']['p95_ms']}"],
                 ["  creating a new store p50 / p95 ms",
                  f"{cold['create_new_store']['p50_ms']} / {cold['create_new_store']['p95_ms']}"]]
    print_table(["check", "value"], rows, title=result["machine"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=10000, help="the user population")
    parser.add_argument("--zipf", type=float, default=1.1,
                        help="Zipf exponent of the visits (0: every user once, in order)")
    parser.add_argument("--seconds", type=float, default=60.0,
                        help="how long to draw visits (with --zipf > 0)")
    parser.add_argument("--saves", type=int, default=20, help="memories saved per visit")
    parser.add_argument("--recalls", type=int, default=5, help="recalls per visit")
    parser.add_argument("--clients", type=int, default=8, help="concurrent clients")
    parser.add_argument("--transport", choices=("mcp", "rest"), default="mcp")
    parser.add_argument("--max-open-stores", type=int, default=64)
    parser.add_argument("--server-arg", action="append", default=[],
                        help="an option for the server's command line (repeatable)")
    parser.add_argument("--cold-samples", type=int, default=100,
                        help="stores whose cold open is timed after the load (0: skip)")
    parser.add_argument("--model", default="balanced", help="embedding preset or model folder")
    parser.add_argument("--json-out", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    args = parser.parse_args(argv)
    result = run(args)
    _report(result)
    if result["errors"]:
        print("\n".join(result["error_examples"]), file=sys.stderr)
    write_json(args.json_out, "hosted", args, result)
    ok = result["errors"] == 0 and result["cross_user_results"] == 0 and \
        result["store_files"] == result["users_visited"]
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
