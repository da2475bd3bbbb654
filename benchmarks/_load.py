"""Concurrent load through a running server (issue 15): half saves, half recalls.

`clients` workers share one event loop in this process; each alternates a `save_memories`
call of `batch` new memories with a `recall_memories` call for `seconds`, over MCP
(Streamable HTTP, the official Python client, one connection per worker) or REST (httpx,
keep-alive). Each call's wall time from the client's side is recorded by kind; a call that
raises or answers an error counts as an error. Afterwards the store must hold every
acknowledged save (`total_count` through the same transport).
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from benchmarks._procstat import cpu_seconds
from benchmarks.metrics import percentile


class Tally:
    def __init__(self) -> None:
        self.latency: dict[str, list[float]] = {"save": [], "recall": [], "get": []}
        self.errors: list[str] = []
        self.saved = 0

    def error(self, what: str) -> None:
        if len(self.errors) < 1000:  # examples are enough; the count is what matters
            self.errors.append(what[:300])
        else:
            self.errors.append("...")


def _items(number: int, i: int, batch: int) -> list[dict[str, str]]:
    return [{"content": f"Load client {number} note {i}.{k}: ticket {number}-{i}-{k} moved "
                        f"to review by the {('ops', 'data', 'web', 'infra')[k % 4]} team."}
            for k in range(batch)]


class Mix:
    """What each worker calls in a loop: the load (a save of `batch`, then a recall), or,
    with `memory_id`, only get_memory of that id (the transport's own cost: the engine's
    part of a get is one row read)."""

    def __init__(self, batch: int, asks: list[str], memory_id: str | None = None) -> None:
        self.batch, self.asks, self.memory_id = batch, asks, memory_id
        self.kinds = ("get",) if memory_id else ("save", "recall")

    def request(self, kind: str, number: int, i: int) -> tuple[str, dict[str, Any]]:
        if kind == "get":
            return "get_memory", {"memory_id": self.memory_id}
        if kind == "save":
            return "save_memories", {"memories": _items(number, i, self.batch)}
        return "recall_memories", {"query": self.asks[(number * 7919 + i) % len(self.asks)]}


async def _mcp_worker(url: str, number: int, seconds: float, mix: Mix,
                      mode: str, tally: Tally) -> None:
    from mcp import Client

    async with Client(url, mode=mode) as client:  # type: ignore[arg-type]
        end, i = time.monotonic() + seconds, 0
        while time.monotonic() < end:
            i += 1
            for kind in mix.kinds:
                tool, args = mix.request(kind, number, i)
                started = time.perf_counter()
                try:
                    result = await client.call_tool(tool, args)
                except Exception as exc:  # noqa: BLE001 - a transport failure is a load failure
                    tally.error(f"{kind}: {type(exc).__name__}: {exc}")
                    continue
                tally.latency[kind].append(time.perf_counter() - started)
                if result.is_error:
                    tally.error(f"{kind}: {result.content[0].text}")  # type: ignore[union-attr]
                elif kind == "save":
                    tally.saved += len(json.loads(result.content[0].text)["saved"])  # type: ignore[union-attr]


async def _rest_worker(base: str, number: int, seconds: float, mix: Mix,
                       tally: Tally) -> None:
    import httpx

    async with httpx.AsyncClient(base_url=base, timeout=60) as http:
        end, i = time.monotonic() + seconds, 0
        while time.monotonic() < end:
            i += 1
            for kind in mix.kinds:
                tool, body = mix.request(kind, number, i)
                started = time.perf_counter()
                try:
                    response = await http.post(f"/{tool}", json=body)
                except Exception as exc:  # noqa: BLE001
                    tally.error(f"{kind}: {type(exc).__name__}: {exc}")
                    continue
                tally.latency[kind].append(time.perf_counter() - started)
                if response.status_code != 200:
                    tally.error(f"{kind}: HTTP {response.status_code} {response.text[:200]}")
                elif kind == "save":
                    tally.saved += len(response.json()["saved"])


async def _total(base: str, path: str, mode: str) -> tuple[int, str]:
    """The store's memory count and the id of its newest memory."""
    if path == "rest":
        import httpx

        async with httpx.AsyncClient(base_url=base, timeout=60) as http:
            listed = (await http.post("/list_memories", json={"limit": 1})).json()
            return int(listed["total_count"]), str(listed["memories"][0]["id"])
    from mcp import Client

    async with Client(base + "/mcp", mode=mode) as client:  # type: ignore[arg-type]
        text = (await client.call_tool("list_memories", {"limit": 1})).content[0].text  # type: ignore[union-attr]
        return (int(text.split('total_count="', 1)[1].split('"', 1)[0]),
                text.split(' ref="', 1)[1].split('"', 1)[0])


async def _warm(base: str, path: str, mode: str, asks: list[str]) -> None:
    """A few recalls first: the server loads its model in the background after starting,
    and that load must not count as the load's CPU or latency."""
    if path == "rest":
        import httpx

        async with httpx.AsyncClient(base_url=base, timeout=120) as http:
            for query in asks[:3]:
                (await http.post("/recall_memories", json={"query": query})).raise_for_status()
        return
    from mcp import Client

    async with Client(base + "/mcp", mode=mode) as client:  # type: ignore[arg-type]
        for query in asks[:3]:
            await client.call_tool("recall_memories", {"query": query})


def _stats(seconds: list[float]) -> dict[str, float]:
    ms = [s * 1000 for s in seconds]
    if not ms:
        return {"n": 0, "p50_ms": 0.0, "p95_ms": 0.0, "p99_ms": 0.0}
    return {"n": len(ms), "p50_ms": round(percentile(ms, 50), 1),
            "p95_ms": round(percentile(ms, 95), 1), "p99_ms": round(percentile(ms, 99), 1)}


def run_load(base: str, path: str, *, server_pid: int, clients: int, seconds: float,
             batch: int, asks: list[str], mode: str = "auto",
             overhead: bool = False) -> dict[str, Any]:
    """Drive `clients` concurrent workers for `seconds` against the server at `base`;
    `path` is "rest" or "mcp" (`mode`: the MCP client's connect mode, auto or legacy);
    `overhead`: get_memory calls only (see Mix)."""
    import anyio

    tally = Tally()

    async def main() -> tuple[float, int, int]:
        before, newest = await _total(base, path, mode)
        mix = Mix(batch, asks, newest if overhead else None)
        started = time.perf_counter()
        async with anyio.create_task_group() as group:
            for number in range(clients):
                if path == "rest":
                    group.start_soon(_rest_worker, base, number, seconds, mix, tally)
                else:
                    group.start_soon(_mcp_worker, base + "/mcp", number, seconds, mix, mode,
                                     tally)
        wall = time.perf_counter() - started
        return wall, before, (await _total(base, path, mode))[0]

    anyio.run(_warm, base, path, mode, asks)
    load_before = [round(x, 2) for x in os.getloadavg()]
    server_cpu, client_cpu = cpu_seconds(server_pid), cpu_seconds(os.getpid())
    wall, before, after = anyio.run(main)
    server_cpu = cpu_seconds(server_pid) - server_cpu
    client_cpu = cpu_seconds(os.getpid()) - client_cpu
    calls = sum(len(v) for v in tally.latency.values())
    every = tally.latency["save"] + tally.latency["recall"] + tally.latency["get"]
    return {
        "path": path, "client_mode": mode if path != "rest" else None, "clients": clients,
        "calls_made": "get_memory" if overhead else "save + recall",
        "get": _stats(tally.latency["get"]),
        "seconds": seconds, "batch": batch, "calls": calls, "wall_s": round(wall, 1),
        "calls_per_s": round(calls / wall, 1) if wall else 0.0,
        "memories_saved_per_s": round(tally.saved / wall, 1) if wall else 0.0,
        "errors": len(tally.errors), "error_examples": tally.errors[:5],
        "save": _stats(tally.latency["save"]), "recall": _stats(tally.latency["recall"]),
        "all": _stats(every), "saved": tally.saved, "stored_before": before,
        "stored_after": after, "lost": before + tally.saved - after,
        "server_cpu_ms_per_call": round(server_cpu * 1000 / calls, 2) if calls else 0.0,
        "client_cpu_ms_per_call": round(client_cpu * 1000 / calls, 2) if calls else 0.0,
        "load_average_before": load_before,
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
    }


def run_library(service: Any, *, clients: int, seconds: float, batch: int,
                asks: list[str]) -> dict[str, Any]:
    """The same mix with no transport: `clients` threads calling one MemoryService in this
    process. Its calls/s is the engine's ceiling on this machine for this load."""
    import threading

    tally, lock = Tally(), threading.Lock()

    def worker(number: int) -> None:
        end, i = time.monotonic() + seconds, 0
        while time.monotonic() < end:
            i += 1
            for kind in ("save", "recall"):
                started = time.perf_counter()
                try:
                    if kind == "save":
                        saved = len(service.save(_items(number, i, batch)).to_dict()["saved"])
                    else:
                        service.recall(asks[(number * 7919 + i) % len(asks)])
                except Exception as exc:  # noqa: BLE001
                    with lock:
                        tally.error(f"{kind}: {type(exc).__name__}: {exc}")
                    continue
                with lock:
                    tally.latency[kind].append(time.perf_counter() - started)
                    tally.saved += saved if kind == "save" else 0

    for query in asks[:3]:  # the model loads on first use: not part of the load
        service.recall(query)
    load_before = [round(x, 2) for x in os.getloadavg()]
    before = service.list_page(limit=1).to_dict()["total_count"]
    cpu = cpu_seconds(os.getpid())
    started = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    cpu = cpu_seconds(os.getpid()) - cpu
    after = service.list_page(limit=1).to_dict()["total_count"]
    calls = sum(len(v) for v in tally.latency.values())
    return {
        "path": "library", "client_mode": None, "clients": clients, "seconds": seconds,
        "batch": batch, "calls": calls, "wall_s": round(wall, 1),
        "calls_per_s": round(calls / wall, 1) if wall else 0.0,
        "memories_saved_per_s": round(tally.saved / wall, 1) if wall else 0.0,
        "errors": len(tally.errors), "error_examples": tally.errors[:5],
        "save": _stats(tally.latency["save"]), "recall": _stats(tally.latency["recall"]),
        "all": _stats(tally.latency["save"] + tally.latency["recall"]), "saved": tally.saved,
        "stored_before": before, "stored_after": after, "lost": before + tally.saved - after,
        "server_cpu_ms_per_call": round(cpu * 1000 / calls, 2) if calls else 0.0,
        "client_cpu_ms_per_call": 0.0, "load_average_before": load_before,
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
    }
