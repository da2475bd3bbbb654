"""Memory browser page times on a 100,000-memory SQLite store (issue 16 targets: first page
load < 300 ms, a filtered page of 50 < 150 ms).

The store is built quickly and kept in --store-dir: synthetic texts (benchmarks/synthetic.py)
written in batches through the store port (tinycontext.testing.bulk) with random unit vectors
under the default model's key (no page but Ask, which is not timed, embeds anything), the
index upkeep run to its end, 20 sessions, 2% profile memories, two years of timestamps,
recall counts on a tenth of the memories and 1% superseded versions (real updates).

Each page is requested from `tinycontext ui` in its own process (routing, guard, templates,
the socket), signed in through the link it prints; "first" is the first request of the
fresh server once it has warmed its model up (its CPU time no longer growing), the rest are
medians and p95 of --repeat further requests.

    python benchmarks/benchmark_ui.py --json-out ui.json
    python benchmarks/benchmark_ui.py --size 20000 --store-dir /tmp/tc-ui-20k
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import Progress, machine_info  # noqa: E402
from benchmarks._procstat import cpu_seconds  # noqa: E402
from benchmarks.metrics import percentile  # noqa: E402
from benchmarks.synthetic import memory_texts  # noqa: E402

TOKEN = "benchmark-token"
BATCH = 5000
SESSIONS = 20
PAGES = [  # (name, path, target ms)
    ("overview (first page load)", "/", 300),
    ("memories, first page", "/memories", 300),
    ("filtered: session + kind", "/memories?session=s7&kind=episodic", 150),
    ("filtered: date range", "/memories?since=2025-03-01&until=2025-03-31", 150),
    ("filtered: session + dates", "/memories?session=s3&since=2025-01-01&until=2025-06-30",
     150),
    ("filtered: keyword search", "/memories?q=berlin", 150),
    ("filtered: search + session", "/memories?q=team&session=s5", 150),
    ("sorted: stale", "/memories?sort=stale", 150),
    ("sorted: most recalled", "/memories?sort=recalled", 150),
    ("superseded versions", "/memories?show=superseded", 150),
    ("page 200 (offset 9,950)", "/memories?page=200", 150),
    ("memory detail", "{detail}", 150),
]


def _service(db: Path) -> Any:
    from tinycontext import TinyContextConfig, build_service

    # The default model, as `tinycontext ui` opens the store with: vectors under another
    # model's key would set the server re-embedding every memory while pages are timed.
    config = TinyContextConfig(memory_db_path=str(db))
    return build_service(config, background=False)


def build(db: Path, size: int, progress: Progress) -> dict[str, Any]:
    import numpy as np

    from tinycontext.testing.bulk import bulk_id, bulk_load, prepared

    service = _service(db)
    key, tokenizer, dims = service.model_key, service.tokenizer, service.embedder.dimensions
    rng, nrng = random.Random(5), np.random.default_rng(5)
    texts = memory_texts(seed=3)
    start_s = 1_704_067_200  # 2024-01-01
    span = 2 * 365 * 86400
    started = time.perf_counter()
    ids: list[str] = []

    def batches() -> Any:
        for done in range(0, size, BATCH):
            n = min(BATCH, size - done)
            vectors = nrng.standard_normal((n, dims), dtype=np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            items = []
            for i in range(n):
                number = done + i
                text = next(texts)
                profile = rng.random() < 0.02
                stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                      time.gmtime(start_s + number * span // size))
                ids.append(bulk_id(number))
                items.append(prepared(
                    ids[-1], text, created_at=stamp, vector=vectors[i].astype("<f4").tobytes(),
                    model_key=key, content_tokens=tokenizer.count(text),
                    kind="profile" if profile else "episodic",
                    session_id=None if profile else f"s{rng.randrange(SESSIONS)}"))
            yield items

    # The index upkeep runs to the end here: the server would otherwise run it while timed.
    bulk_load(service.store, batches(), key, lambda line: progress.tick(f"{size:,}: {line}"))
    recalled = rng.sample(ids, size // 10)
    for count in range(1, 4):
        service.store.mark_recalled(recalled[: len(recalled) // count], "2026-01-01T00:00:00Z")
    # 1% superseded through the real operation
    for memory_id in rng.sample(ids, size // 100):
        service.update(memory_id, "Revised: " + service.detail(memory_id).to_dict()["content"])
    page = service.list_page(limit=1, offset=min(5000, size // 2)).to_dict()
    service.close()
    return {"size": size, "build_s": round(time.perf_counter() - started, 1),
            "detail": page["memories"][0]["id"]}


def _serve(db: Path) -> tuple[subprocess.Popen[str], str]:
    """`tinycontext ui` on the store `db` (its own process, no browser opened) and the link it
    prints, which signs a client in."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TINYCONTEXT_")}
    env.update(TINYCONTEXT_MEMORY_DB_PATH=str(db),
               TINYCONTEXT_CONFIG_FILE=str(db.parent / "none.json"))
    command = [str(Path(sys.executable).parent / "tinycontext"), "ui", "--no-open"]
    server = subprocess.Popen(command, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    assert server.stdout is not None
    for line in server.stdout:
        if "memory browser:" in line:
            return server, line.split("memory browser:", 1)[1].strip()
    server.wait(30)
    raise SystemExit(f"tinycontext ui printed no link (exit code {server.returncode})")


def _settled(pid: int, timeout: float = 120.0) -> None:
    """Wait until the server has warmed its model up (its CPU time stops growing): the pages
    are timed on their own, not against the model loading on the same cores."""
    deadline = time.monotonic() + timeout
    before = cpu_seconds(pid)
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = cpu_seconds(pid)
        if now - before < 0.02:
            return
        before = now


async def measure(db: Path, repeat: int, detail: str) -> list[dict[str, Any]]:
    import httpx

    server, link = _serve(db)
    base, _, query = link.partition("/?")
    _settled(server.pid)
    rows = []
    try:
        async with httpx.AsyncClient(base_url=base, timeout=120) as client:
            await client.get(f"/?{query}")  # sign in (the redirect only)
            for name, path, target in PAGES:
                path = path.format(detail=f"/memory/{detail}")
                times = []
                for _ in range(repeat + 1):
                    started = time.perf_counter()
                    response = await client.get(path)
                    times.append((time.perf_counter() - started) * 1000)
                    if response.status_code != 200:
                        raise SystemExit(f"{path}: HTTP {response.status_code}")
                rest = times[1:]
                rows.append({"page": name, "path": path, "first_ms": round(times[0], 1),
                             "median_ms": round(percentile(rest, 50), 1),
                             "p95_ms": round(percentile(rest, 95), 1), "target_ms": target,
                             "bytes": len(response.content)})
    finally:
        server.terminate()
        server.wait(60)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--store-dir", type=Path, default=Path("/tmp/tinycontext-bench-ui"))
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--rebuild", action="store_true", help="build the store again")
    parser.add_argument("--json-out", help="also write the results as JSON here")
    args = parser.parse_args(argv)
    progress = Progress("ui")
    args.store_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    db = args.store_dir / f"ui-{args.size}.db"
    info_file = args.store_dir / f"ui-{args.size}.json"
    if args.rebuild or not info_file.exists() or "detail" not in json.loads(
            info_file.read_text()):  # a store kept by an earlier version of this script
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        info = build(db, args.size, progress)
        info_file.write_text(json.dumps(info))
    info = json.loads(info_file.read_text())
    work = args.store_dir / "measured.db"  # a copy: the kept store stays as built
    shutil.copyfile(db, work)
    for suffix in ("-wal", "-shm"):
        Path(f"{work}{suffix}").unlink(missing_ok=True)
    rows = asyncio.run(measure(work, args.repeat, info["detail"]))
    print(f"Memory browser pages, {info['size']:,} memories (random vectors under the default "
          f"model's key), {args.repeat} repeats, `tinycontext ui` in its own process")
    print(f"{'page':32} {'first ms':>9} {'median':>8} {'p95':>8} {'target':>7}")
    for row in rows:
        ok = "ok" if row["first_ms"] < row["target_ms"] and row["p95_ms"] < row["target_ms"] \
            else "OVER"
        print(f"{row['page']:32} {row['first_ms']:9.1f} {row['median_ms']:8.1f} "
              f"{row['p95_ms']:8.1f} {row['target_ms']:>5} {ok}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(
            {"store": info, "pages": rows, "machine": machine_info()}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
