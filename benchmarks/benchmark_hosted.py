"""Hosted multi-user mode under load (issue 4): many distinct users through the HTTP path.

A `tinycontext serve` (MCP, default) or `tinycontext rest` process runs in hosted mode on
loopback, trusting this process as its proxy. `--clients` concurrent clients work through
`--users` distinct users; each user saves `--saves` memories (one call each) and recalls once
with a question every user shares, so a leak between stores would show up in the answers.

Checked: zero errors, zero cross-user results (every recalled memory carries its owner's
marker), one store file per user, and the server's open file descriptors (sampled from
/proc/<pid>/fd) staying bounded by the open-store LRU rather than growing with users.
Reported: p50/p95/p99 per request type, throughput, peak fds, server peak RSS.

    python benchmarks/benchmark_hosted.py                       # 1,000 users, MCP, 8 clients
    python benchmarks/benchmark_hosted.py --transport rest --users 200
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import secrets
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import (  # noqa: E402
    Progress,
    machine_info,
    machine_line,
    print_table,
    throwaway_dir,
    write_json,
)
from benchmarks.metrics import percentile  # noqa: E402

COLOURS = ["teal", "amber", "crimson", "olive", "indigo", "coral", "ivory", "slate"]
NAMES = ["Miso", "Pepper", "Tofu", "Biscuit", "Nori", "Pixel", "Mango", "Juniper"]
JOBS = ["nurse", "welder", "pilot", "chemist", "teacher", "architect", "baker", "editor"]
CITIES = ["Leipzig", "Porto", "Osaka", "Tucson", "Bergen", "Quito", "Lyon", "Perth"]
QUESTION = "What is my favourite colour and what is my cat called?"
MARKER = re.compile(r"\[u(\d{5})\]")


def facts(user: int, saves: int) -> list[str]:
    """Similar facts for every user (shared words), each tagged with its owner's marker."""
    pick = lambda items, salt: items[(user * 7 + salt) % len(items)]  # noqa: E731
    base = [
        f"My favourite colour is {pick(COLOURS, 1)} and my cat is called {pick(NAMES, 2)}.",
        f"I work as a {pick(JOBS, 3)} in {pick(CITIES, 4)}.",
        f"My project deadline is on day {user % 28 + 1} of month {user % 12 + 1}.",
        f"I drink {pick(['tea', 'coffee', 'cocoa', 'mate'], 5)} every morning at {user % 5 + 6}.",
        f"My manager is called {pick(NAMES, 6)} {pick(CITIES, 7)}son.",
    ]
    out = []
    for n in range(saves):
        extra = "" if n < len(base) else f" Note number {n}."
        out.append(f"[u{user:05d}] {base[n % len(base)]}{extra}")
    return out


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _command() -> list[str]:
    script = Path(sys.executable).parent / "tinycontext"
    return [str(script)] if script.exists() else [sys.executable, "-m", "tinycontext"]


class FdSampler(threading.Thread):
    """Counts the server's open file descriptors every `every` seconds."""

    def __init__(self, pid: int, every: float = 0.1) -> None:
        super().__init__(daemon=True)
        self.folder, self.every = Path(f"/proc/{pid}/fd"), every
        self.samples: list[int] = []
        self.stop = threading.Event()

    def count(self) -> int:
        try:
            return len(os.listdir(self.folder))
        except OSError:
            return 0

    def run(self) -> None:
        while not self.stop.is_set():
            self.samples.append(self.count())
            self.stop.wait(self.every)


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time the process used so far."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def _peak_rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


class Tally:
    def __init__(self) -> None:
        self.latency: dict[str, list[float]] = {"save": [], "recall": [], "session": []}
        self.errors: list[str] = []
        self.cross_user = 0
        self.recalled = 0
        self.own_fact_found = 0
        self.users_done = 0

    def check_recall(self, user: int, text: str) -> None:
        owners = [int(m) for m in MARKER.findall(text)]
        self.recalled += len(owners)
        self.cross_user += sum(1 for owner in owners if owner != user)
        if not owners:
            self.errors.append(f"user {user}: recall returned nothing")
        elif "favourite colour" in text:
            self.own_fact_found += 1


async def _mcp_worker(base: str, token: str, queue: asyncio.Queue[int], saves: int,
                      tally: Tally) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    current = {"user": ""}

    async def hook(request: Any) -> None:
        request.headers["X-TinyContext-User-Id"] = current["user"]

    http = httpx2.AsyncClient(headers={"X-TinyContext-Proxy-Token": token}, timeout=120,
                              event_hooks={"request": [hook]})
    async with http:
        while not queue.empty():
            user = queue.get_nowait()
            current["user"] = f"user-{user:05d}@example.com"
            try:
                started = time.perf_counter()
                async with Client(streamable_http_client(base + "/mcp", http_client=http),
                                  mode="legacy") as client:
                    tally.latency["session"].append(time.perf_counter() - started)
                    for fact in facts(user, saves):
                        t0 = time.perf_counter()
                        result = await client.call_tool("save_memories",
                                                        {"memories": [{"content": fact}]})
                        tally.latency["save"].append(time.perf_counter() - t0)
                        if result.is_error:
                            tally.errors.append(f"user {user} save: {result.content[0].text}")
                    t0 = time.perf_counter()
                    result = await client.call_tool("recall_memories", {"query": QUESTION})
                    tally.latency["recall"].append(time.perf_counter() - t0)
                    if result.is_error:
                        tally.errors.append(f"user {user} recall: {result.content[0].text}")
                    else:
                        tally.check_recall(user, result.content[0].text)  # type: ignore[union-attr]
            except Exception as exc:  # noqa: BLE001 - counted, the run goes on
                tally.errors.append(f"user {user}: {type(exc).__name__}: {exc}")
            tally.users_done += 1


async def _rest_worker(base: str, token: str, queue: asyncio.Queue[int], saves: int,
                       tally: Tally) -> None:
    import httpx

    async with httpx.AsyncClient(base_url=base, timeout=120) as http:
        while not queue.empty():
            user = queue.get_nowait()
            headers = {"X-TinyContext-Proxy-Token": token,
                       "X-TinyContext-User-Id": f"user-{user:05d}@example.com"}
            try:
                for fact in facts(user, saves):
                    t0 = time.perf_counter()
                    response = await http.post("/save_memories", headers=headers,
                                               json={"memories": [{"content": fact}]})
                    tally.latency["save"].append(time.perf_counter() - t0)
                    if response.status_code != 200:
                        tally.errors.append(f"user {user} save: {response.status_code}")
                t0 = time.perf_counter()
                response = await http.post("/recall_memories", headers=headers,
                                           json={"query": QUESTION})
                tally.latency["recall"].append(time.perf_counter() - t0)
                if response.status_code != 200:
                    tally.errors.append(f"user {user} recall: {response.status_code}")
                else:
                    text = "\n".join(m["content"] for m in response.json()["memories"])
                    tally.check_recall(user, text)
            except Exception as exc:  # noqa: BLE001
                tally.errors.append(f"user {user}: {type(exc).__name__}: {exc}")
            tally.users_done += 1


async def _drive(args: argparse.Namespace, base: str, token: str, tally: Tally,
                 progress: Progress, fds: FdSampler, checkpoints: dict[int, int]) -> float:
    queue: asyncio.Queue[int] = asyncio.Queue()
    for user in range(args.users):
        queue.put_nowait(user)
    worker = _mcp_worker if args.transport == "mcp" else _rest_worker
    started = time.perf_counter()
    tasks = [asyncio.create_task(worker(base, token, queue, args.saves, tally))
             for _ in range(args.clients)]
    marks = sorted({max(1, args.users // 10), args.users // 2, args.users})
    while not all(t.done() for t in tasks):
        await asyncio.sleep(0.5)
        for mark in marks:
            if tally.users_done >= mark and mark not in checkpoints:
                checkpoints[mark] = fds.count()
        progress.tick(f"{tally.users_done}/{args.users} users, {len(tally.errors)} errors, "
                      f"{fds.count()} fds")
    await asyncio.gather(*tasks)
    return time.perf_counter() - started


def _ms(values: list[float], q: float) -> float:
    return round(percentile(values, q) * 1000, 1) if values else 0.0


def run(args: argparse.Namespace) -> dict[str, Any]:
    progress = Progress("hosted", args.quiet)
    token, secret = secrets.token_urlsafe(48), secrets.token_urlsafe(48)
    with throwaway_dir("hosted") as work:
        tenants = work / "tenants"
        tenants.mkdir(mode=0o700)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TINYCONTEXT_", "OTEL_"))}
        env.update(
            TINYCONTEXT_CONFIG_FILE=str(work / "no-config.json"),
            TINYCONTEXT_MEMORY_DB_PATH=str(work / "single" / "memories.db"),
            TINYCONTEXT_EMBEDDING_MODEL=args.model,
            TINYCONTEXT_TENANCY="proxy-header", TINYCONTEXT_TENANT_SECRET=secret,
            TINYCONTEXT_TENANT_STORE_DIR=str(tenants),
            TINYCONTEXT_TRUSTED_PROXY_CIDRS="127.0.0.1/32",
            TINYCONTEXT_TRUSTED_PROXY_TOKEN=token,
            TINYCONTEXT_MAX_OPEN_STORES=str(args.max_open_stores),
        )
        port = _free_port()
        command = "serve" if args.transport == "mcp" else "rest"
        log = open(work / "server.log", "w")  # noqa: SIM115
        server = subprocess.Popen([*_command(), command, "--host", "127.0.0.1", "--port",
                                   str(port)], env=env, stdout=subprocess.DEVNULL, stderr=log)
        base = f"http://127.0.0.1:{port}"
        try:
            _wait(base, server)
            fds = FdSampler(server.pid)
            idle_fds = fds.count()
            cpu_before = _cpu_seconds(server.pid)
            client_before = _cpu_seconds(os.getpid())
            fds.start()
            tally, checkpoints = Tally(), {}
            progress(f"{args.users} users x ({args.saves} saves + 1 recall), "
                     f"{args.clients} clients, {args.transport.upper()}")
            wall = asyncio.run(_drive(args, base, token, tally, progress, fds, checkpoints))
            fds.stop.set()
            fds.join()
            rss = _peak_rss_mb(server.pid)
            cpu = _cpu_seconds(server.pid) - cpu_before
            client_cpu = _cpu_seconds(os.getpid()) - client_before
            files = len(list(tenants.glob("*.db")))
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
            log.close()
        server_log = (work / "server.log").read_text()[-2000:]
    requests = len(tally.latency["save"]) + len(tally.latency["recall"])
    every = tally.latency["save"] + tally.latency["recall"]
    return {
        "transport": args.transport, "users": args.users, "saves_per_user": args.saves,
        "clients": args.clients, "model": args.model, "max_open_stores": args.max_open_stores,
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
        "fds": {"idle": idle_fds, "peak": max(fds.samples, default=0),
                "final": fds.samples[-1] if fds.samples else 0,
                "at_users": {str(k): v for k, v in sorted(checkpoints.items())}},
        "server_peak_rss_mb": round(rss, 1),
        "server_cpu_ms_per_call": round(cpu * 1000 / requests, 1) if requests else 0.0,
        "client_cpu_ms_per_call": round(client_cpu * 1000 / requests, 1) if requests else 0.0,
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--saves", type=int, default=5, help="memories saved per user")
    parser.add_argument("--clients", type=int, default=8, help="concurrent clients")
    parser.add_argument("--transport", choices=("mcp", "rest"), default="mcp")
    parser.add_argument("--max-open-stores", type=int, default=64)
    parser.add_argument("--model", default="balanced", help="embedding preset or model folder")
    parser.add_argument("--json-out", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    args = parser.parse_args(argv)
    result = run(args)
    lat = result["latency_ms"]
    rows = [[kind, v["count"], v["p50"], v["p95"], v["p99"]] for kind, v in lat.items()]
    print_table(["request", "count", "p50 ms", "p95 ms", "p99 ms"], rows,
                title=f"Hosted mode, {result['transport'].upper()}: {result['users']} users x "
                f"({result['saves_per_user']} saves + 1 recall), {result['clients']} clients")
    fds = result["fds"]
    print_table(["check", "value"], [
        ["errors", result["errors"]],
        ["cross-user results (by content)", result["cross_user_results"]],
        ["recalled memories checked", result["recalled_memories"]],
        ["recalls with the user's own colour fact", result["recalls_with_own_colour_fact"]],
        ["store files", result["store_files"]],
        ["throughput (tool calls/s)", result["requests_per_second"]],
        ["wall time (s)", result["wall_seconds"]],
        ["server fds idle / peak / final", f"{fds['idle']} / {fds['peak']} / {fds['final']}"],
        ["server fds after N users", ", ".join(f"{k}: {v}" for k, v in fds["at_users"].items())],
        ["max open stores", result["max_open_stores"]],
        ["server peak RSS (MB)", result["server_peak_rss_mb"]],
        ["CPU per tool call, server / driver (ms)",
         f"{result['server_cpu_ms_per_call']} / {result['client_cpu_ms_per_call']}"],
    ], title=result["machine"])
    if result["errors"]:
        print("\n".join(result["error_examples"]), file=sys.stderr)
    write_json(args.json_out, "hosted", args, result)
    ok = result["errors"] == 0 and result["cross_user_results"] == 0 and \
        result["store_files"] == result["users"]
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
