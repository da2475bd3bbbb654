"""What opening a user's store costs in hosted mode, measured apart from the load.

After a hosted run the per-user files are still there. For a sample of them this opens each
the way the server does (a service on the file, sharing one loaded embedding model) and
times its first recall (the file opened, schema checked, the vector mirror loaded, then the
recall) against a second recall on the now open store; the difference is the cold-open
cost. Creating a store for a user never seen before (schema, WAL set-up) is timed too.
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

from benchmarks._common import make_config, make_embedder
from benchmarks.metrics import percentile


def _ms(values: list[float], q: float) -> float:
    return round(percentile([v * 1000 for v in values], q), 1) if values else 0.0


def _summary(values: list[float]) -> dict[str, float]:
    return {"p50_ms": _ms(values, 50), "p95_ms": _ms(values, 95), "n": len(values)}


def measure(store_dir: Path, model: str, question: str, samples: int,
            seed: int = 5) -> dict[str, Any]:
    files = sorted(store_dir.glob("*.db"))
    picked = random.Random(seed).sample(files, min(samples, len(files)))
    from tinycontext import build_service
    from tinycontext.testing import InMemoryStore

    # One model and tokenizer shared by every store, loaded before any opens (as the server);
    # the default tokenizer comes from a service over an in-memory store (no file opened).
    embedder = make_embedder(model, store_dir.parent / "models")
    embedder.embed(["warm up"])
    tokenizer = build_service(make_config(store_dir / "unused.db", model), store=InMemoryStore(),
                              embedder=embedder, background=False).tokenizer
    tokenizer.count("warm up")

    def open_service(path: Path) -> Any:
        return build_service(make_config(path, model), embedder=embedder, tokenizer=tokenizer)

    cold, warm, extra, created = [], [], [], []
    for path in picked:
        started = time.perf_counter()
        service = open_service(path)
        service.recall(question)
        first = time.perf_counter() - started
        started = time.perf_counter()
        service.recall(question)
        second = time.perf_counter() - started
        service.close()
        cold.append(first)
        warm.append(second)
        extra.append(max(0.0, first - second))
    fresh = store_dir.parent / "cold-create"
    fresh.mkdir(exist_ok=True)
    for n in range(min(samples, 50)):
        started = time.perf_counter()
        service = open_service(fresh / f"new-{n}.db")
        service.list_page(limit=1)
        created.append(time.perf_counter() - started)
        service.close()
    return {"stores_sampled": len(picked), "first_recall_cold": _summary(cold),
            "recall_warm": _summary(warm), "cold_open_cost": _summary(extra),
            "create_new_store": _summary(created)}
