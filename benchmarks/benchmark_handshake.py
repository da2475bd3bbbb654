"""How fast a freshly spawned `tinycontext` (MCP on stdio) answers the MCP handshake.

Clients such as Codex CLI give a stdio server a short time to answer `initialize` and
`tools/list`; a server that answers later is left without tools for the whole session. This
spawns the `tinycontext` command `--runs` times (default 20) and times, per run, spawn ->
`initialize` reply -> `tools/list` reply (the messages sent as a client sends them: initialize,
then after its reply `notifications/initialized` and `tools/list`), and, with `--first-call`,
the first `recall_memories` answer after that (which may wait for the model to load).

It does this idle and with `--busy` CPU-bound processes running beside it (default 2: both
cores of a 2-core machine busy, as on a laptop running a build). After each run the same two
requests are timed against a floor: this interpreter running a stdlib-only stand-in that
answers them from memory (what starting any Python stdio server costs on the machine at that
moment). `cpu_to_tools_list` is the CPU time the server process had used when its
`tools/list` answer arrived (all threads, Linux only): what the machine's load does not
change. Every run uses a throwaway store; the busy processes are stopped at the end.

    python benchmarks/benchmark_handshake.py
    python benchmarks/benchmark_handshake.py --runs 40 --json-out handshake.json
"""

from __future__ import annotations

import argparse
import json
import os
import select
import subprocess
import sys
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
from benchmarks._servers import _command, _env  # noqa: E402
from benchmarks.metrics import percentile  # noqa: E402

BUSY_LOOP = "while True:\n    pass\n"
# The floor: this interpreter answering the two requests with nothing else to do (no import
# beyond the standard library), what any Python stdio server costs on this machine.
FLOOR_SERVER = """
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if "id" in message:
        result = {"tools": [{"name": "t%d" % i} for i in range(6)]}
        if message["method"] == "initialize":
            result = {"protocolVersion": "2025-06-18", "capabilities": {},
                      "serverInfo": {"name": "floor", "version": "0"}}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"""
TIMEOUT = 60.0


def _message(method: str, request_id: int | None = None, **params: Any) -> bytes:
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if request_id is not None:
        body["id"] = request_id
    if params or request_id is not None:
        body["params"] = params
    return (json.dumps(body) + "\n").encode()


class Reader:
    """Newline-delimited JSON-RPC replies from a child's stdout, with a deadline."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdout is not None
        self.fd = process.stdout.fileno()
        self.buffer = b""

    def reply(self, request_id: int, deadline: float) -> dict[str, Any]:
        while True:
            while b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                if line.strip():
                    message = json.loads(line)
                    if message.get("id") == request_id:
                        return dict(message)
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                raise TimeoutError(f"no reply to request {request_id} within {TIMEOUT} s")
            chunk = os.read(self.fd, 65536)
            if not chunk:
                raise EOFError("the server closed stdout before replying")
            self.buffer += chunk


def cpu_seconds(pid: int) -> float | None:
    """CPU time a process has used so far, all its threads (Linux schedstat), else None."""
    total = 0
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            total += int((task / "schedstat").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return total / 1e9


def one_run(folder: Path, first_call: bool, floor: bool = False) -> dict[str, float]:
    """Seconds from spawn to each reply of one handshake (and first call)."""
    env = _env(folder / "memories.db")
    command = [sys.executable, "-c", FLOOR_SERVER] if floor else _command()
    first_call = first_call and not floor
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert process.stdin is not None
    reader = Reader(process)
    deadline = time.monotonic() + TIMEOUT
    times: dict[str, float] = {}
    try:
        process.stdin.write(_message(
            "initialize", 1, protocolVersion="2025-06-18", capabilities={},
            clientInfo={"name": "benchmark_handshake", "version": "1"}))
        process.stdin.flush()
        reader.reply(1, deadline)
        times["initialize_s"] = time.perf_counter() - started
        process.stdin.write(_message("notifications/initialized")
                            + _message("tools/list", 2))
        process.stdin.flush()
        tools = reader.reply(2, deadline)
        times["tools_list_s"] = time.perf_counter() - started
        if (cpu := cpu_seconds(process.pid)) is not None:
            times["cpu_to_tools_list_s"] = cpu
        if len(tools["result"]["tools"]) < 6:
            raise RuntimeError(f"tools/list listed {len(tools['result']['tools'])} tools")
        if first_call:
            process.stdin.write(_message("tools/call", 3, name="recall_memories",
                                         arguments={"query": "what do I prefer?"}))
            process.stdin.flush()
            answer = reader.reply(3, deadline)
            if answer.get("result", {}).get("isError", True):
                raise RuntimeError(f"recall failed: {answer}")
            times["first_call_s"] = time.perf_counter() - started
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return times


def start_busy(count: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) for _ in range(count)]


def stop(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        process.kill()
    for process in processes:
        process.wait()


def measure(label: str, runs: int, busy: int, first_call: bool, progress: Progress,
            floor: bool) -> dict[str, Any]:
    hogs = start_busy(busy)
    samples: list[dict[str, float]] = []
    floors: list[dict[str, float]] = []
    load_before = os.getloadavg()[0]
    try:
        time.sleep(1.0 if busy else 0.0)  # let the busy processes get going
        for n in range(runs):
            with throwaway_dir("handshake") as folder:
                samples.append(one_run(folder, first_call))
                if floor:  # interleaved, so both see the same load
                    floors.append(one_run(folder, False, floor=True))
            progress.tick(f"{label}: {n + 1}/{runs} runs")
    finally:
        stop(hogs)
    out: dict[str, Any] = {"label": label, "busy_processes": busy, "runs": runs,
                           "load_average_before": round(load_before, 2),
                           "load_average_after": round(os.getloadavg()[0], 2)}
    columns = {key.removesuffix("_s"): [s[key] for s in samples] for key in samples[0]}
    for key in ("tools_list_s", "cpu_to_tools_list_s"):
        if floors and key in floors[0]:
            columns["floor_" + key.removesuffix("_s")] = [f[key] for f in floors]
    for name, seconds in columns.items():
        ms = [s * 1000 for s in seconds]
        out[name] = {"p50_ms": round(percentile(ms, 50), 1),
                     "p95_ms": round(percentile(ms, 95), 1),
                     "max_ms": round(max(ms), 1)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--runs", type=int, default=20, help="spawns per condition (20)")
    parser.add_argument("--busy", type=int, default=2,
                        help="CPU-bound processes beside the busy runs (2; 0 skips them)")
    parser.add_argument("--first-call", action="store_true",
                        help="also time the first recall_memories answer after the handshake")
    parser.add_argument("--no-floor", dest="floor", action="store_false",
                        help="skip the floor runs (a stdlib-only Python stand-in answering "
                        "the same two requests, spawned after each run)")
    parser.add_argument("--json-out", metavar="PATH", help="also write the results as JSON here")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    args = parser.parse_args()
    progress = Progress("handshake", args.quiet)
    conditions = [("idle", 0)] + ([(f"{args.busy} busy", args.busy)] if args.busy else [])
    results = [measure(label, args.runs, busy, args.first_call, progress, args.floor)
               for label, busy in conditions]
    info = machine_info()
    print(f"\n{machine_line(info)}; revision {info['git_revision']}")
    phases = [p for p in ("initialize", "tools_list", "cpu_to_tools_list", "first_call",
                          "floor_tools_list", "floor_cpu_to_tools_list") if p in results[0]]
    headers = ["condition", "runs", "load before/after"]
    for phase in phases:
        headers += [f"{phase} p50 ms", f"{phase} p95 ms", f"{phase} max ms"]
    rows = []
    for r in results:
        row: list[Any] = [r["label"], r["runs"],
                          f"{r['load_average_before']:.2f}/{r['load_average_after']:.2f}"]
        for phase in phases:
            row += [r[phase]["p50_ms"], r[phase]["p95_ms"], r[phase]["max_ms"]]
        rows.append(row)
    print_table(headers, rows, "Spawn -> MCP reply of a stdio `tinycontext` (ms)")
    write_json(args.json_out, "handshake", args, results)


if __name__ == "__main__":
    main()
