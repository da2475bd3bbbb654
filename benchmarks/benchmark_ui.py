"""Memory browser page times on a 100,000-memory SQLite store (issue 16 targets: first page
load < 300 ms, a filtered page of 50 < 150 ms).

The store is built quickly and kept in --store-dir: synthetic texts (benchmarks/synthetic.py)
stored through `SqliteStore.add` in batches with random unit vectors under the hash test
embedder's model key (page timing needs no real model: no page but Ask embeds anything, and
Ask's figure is labelled as the hash embedder's), 20 sessions, 2% profile memories, two years
of timestamps, recall counts on a tenth of the memories and 1% superseded versions.

Each page is requested through the real app (routing, guard, templates) in this process over
httpx's ASGI transport; "first" is the first request of a fresh app and service, the rest are
medians and p95 of --repeat further requests.

    python benchmarks/benchmark_ui.py --json-out ui.json
    python benchmarks/benchmark_ui.py --size 20000 --store-dir /tmp/tc-ui-20k
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import Progress, machine_info  # noqa: E402
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
    from tinycontext.testing import HashEmbedder

    config = TinyContextConfig(memory_db_path=str(db))
    return build_service(config, embedder=HashEmbedder(384, "hash-384"), background=False)


def build(db: Path, size: int, progress: Progress) -> dict[str, Any]:
    import numpy as np

    from tinycontext.testing.bulk import bulk_id, bulk_load, prepared

    service = _service(db)
    key, tokenizer = service.model_key, service.tokenizer
    rng, nrng = random.Random(5), np.random.default_rng(5)
    texts = memory_texts(seed=3)
    start_s = 1_704_067_200  # 2024-01-01
    span = 2 * 365 * 86400
    started = time.perf_counter()
    ids: list[str] = []

    def batches() -> Any:
        for done in range(0, size, BATCH):
            n = min(BATCH, size - done)
            vectors = nrng.standard_normal((n, 384), dtype=np.float32)
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

    # The pages browse and never search by vector: no index upkeep, as before.
    bulk_load(service.store, batches(), key, lambda line: progress.tick(f"{size:,}: {line}"),
              upkeep=False)
    recalled = rng.sample(ids, size // 10)
    for count in range(1, 4):
        service.store.mark_recalled(recalled[: len(recalled) // count], "2026-01-01T00:00:00Z")
    # 1% superseded through the real operation
    for memory_id in rng.sample(ids, size // 100):
        service.update(memory_id, "Revised: " + service.detail(memory_id).to_dict()["content"])
    service.close()
    return {"size": size, "build_s": round(time.perf_counter() - started, 1)}


async def measure(db: Path, repeat: int) -> list[dict[str, Any]]:
    import httpx

    from tinycontext.adapters.web.app import create_ui_app
    from tinycontext.app.service_source import OneService

    service = _service(db)
    detail = service.list_page(limit=1, offset=5000).to_dict()["memories"][0]["id"]
    app = create_ui_app(OneService(service), token=TOKEN, hosts=None)
    transport = httpx.ASGITransport(app=app)
    rows = []
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        await client.get(f"/?token={TOKEN}")  # sign in (the redirect only)
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
    service.close()
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
    if args.rebuild or not info_file.exists():
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        info = build(db, args.size, progress)
        info_file.write_text(json.dumps(info))
    info = json.loads(info_file.read_text())
    work = args.store_dir / "measured.db"  # a copy: the kept store stays as built
    shutil.copyfile(db, work)
    for suffix in ("-wal", "-shm"):
        Path(f"{work}{suffix}").unlink(missing_ok=True)
    rows = asyncio.run(measure(work, args.repeat))
    print(f"Memory browser pages, {info['size']:,} memories (hash-embedder vectors), "
          f"{args.repeat} repeats")
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
