"""Filtered recall in one SQLite (or PostgreSQL) store: tags held by 1% and 50% of the
memories, a time window, and "as of" over a store where 30% of the memories have 1-5 older versions.

The store (default 100,000 memories, built once into --store-dir, see _filters_build.py)
is searched on a copy. For each case, over the same questions:
  - recall through the service (query embedding, both retrievers, fusion, budget), p50/p95;
  - the dense retriever's filtered top 10 against an exact filtered search (brute-force
    cosine over every stored vector that passes the filter): recall@10.
Targets (issue 23): the 1% tag's p95 at most the unfiltered p95 with recall@10 >= 0.99; the
50% tag's p95 at most 1.3x; "as of" at most 1.5x.
--postgres runs the same cases on a PostgreSQL copy of the store's first --pg-memories
memories and their versions (a pgserver kept in --store-dir/pg; the copy is made once, about
15 minutes for 100,000 memories here, most of it the HNSW build).

    python benchmarks/benchmark_filters.py --json-out filters.json
    python benchmarks/benchmark_filters.py --size 20k --store-dir /tmp/tc-filters-20k
    python benchmarks/benchmark_filters.py --postgres --pg-memories 100k --json-out filters-pg.json
    python benchmarks/benchmark_filters.py --clean
"""

from __future__ import annotations

import argparse
import calendar
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import (  # noqa: E402
    Progress,
    add_common_arguments,
    machine_info,
    machine_line,
    make_embedder,
    make_service,
    parse_sizes,
    print_table,
    settings,
    warn_if_busy,
    write_json,
)
from benchmarks._filters_build import (  # noqa: E402
    BASE,
    HALF,
    MINUTE,
    RARE,
    build,
    live_rows,
    stamp,
    tag_rows,
)
from benchmarks._filters_pg import pg_url, prefix_rows  # noqa: E402
from benchmarks.metrics import percentile  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "locomo10.json"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=lambda t: parse_sizes(t)[-1], default=100_000,
                        help="current memories (default 100k)")
    parser.add_argument("--versioned", type=float, default=0.3,
                        help="share of memories with 1-5 older versions")
    parser.add_argument("--real-texts", type=int, default=2000,
                        help="texts embedded by the real model (the rest are mixes)")
    parser.add_argument("--noise", type=float, default=0.35, help="noise of the mixed vectors")
    parser.add_argument("--store-dir", type=Path, default=Path("/tmp/tc-filters"),
                        help="where the built store is kept between runs")
    parser.add_argument("--queries", type=int, default=100, help="timed recalls per case")
    parser.add_argument("--warmup", type=int, default=10, help="untimed recalls first")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo file")
    parser.add_argument("--clean", action="store_true", help="delete --store-dir and exit")
    parser.add_argument("--postgres", action="store_true",
                        help="search a PostgreSQL copy of the store instead (a pgserver kept "
                        "in --store-dir/pg, loaded once from the built store)")
    parser.add_argument("--pg-memories", type=lambda t: parse_sizes(t)[-1], default=20_000,
                        help="with --postgres: copy the first N memories and their versions "
                        "(default 20k)")
    add_common_arguments(parser)
    return parser.parse_args(argv)


def cases(rng: Any, count: int) -> list[tuple[str, dict[str, Any], list[Any]]]:
    """(name, recall arguments per query, as-of moments per query or Nones)."""
    def moment() -> int:
        return int(BASE + rng.integers(count // 10, count) * MINUTE + 15)

    out: list[tuple[str, dict[str, Any], list[Any]]] = [
        ("unfiltered", {}, []), (f"tag on 1% ({RARE})", {"tags": [RARE]}, []),
        (f"tag on 50% ({HALF})", {"tags": [HALF]}, []),
        ("since: last 10% of the span", {"since": stamp(BASE + int(count * 0.9) * MINUTE)}, []),
    ]
    out.append(("as_of: a random moment", {}, [moment() for _ in range(10_000)]))
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    import numpy as np

    from benchmarks.realistic import RealisticText
    from tinycontext.testing.retrievers import pool_size

    progress = Progress("filters", args.quiet)
    warn_if_busy(progress)
    folder = args.store_dir
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    source = RealisticText(args.data)
    texts = source.memory_texts(args.seed)
    questions = source.questions(args.queries + args.warmup, seed=args.seed + 1)
    embedder = make_embedder(args.model, folder / "models")
    embedder.embed(["load the model before timing"])
    built = folder / "build.json"
    meta = json.loads(built.read_text()) if built.exists() else None
    wanted = {"size": args.size, "versioned": args.versioned, "real_texts": args.real_texts}
    if meta is None or any(meta.get(k) != v for k, v in wanted.items()):
        build(args, progress, embedder, texts)
        meta = json.loads(built.read_text())
    work = folder / "work.db"
    for leftover in folder.glob("work.db*"):
        leftover.unlink(missing_ok=True)
    shutil.copyfile(folder / "pristine.db", work)
    matrix = np.load(folder / "vectors.npy", mmap_mode="r")
    rows = dict(np.load(folder / "rows.npz"))
    size, server = args.size, None
    if args.postgres:
        size = min(args.size, args.pg_memories)
        count = prefix_rows(rows, size)
        rows = {k: v[:count] for k, v in rows.items()}
        url, server = pg_url(args, work, count, progress)
        service = make_service(work, args.model, embedder=embedder, store_url=url,
                               **settings(args))
    else:
        service = make_service(work, args.model, embedder=embedder, **settings(args))
    vectors = [service.embedder.embed([service.config.dense_query_prefix + q])[0]
               for q in questions]
    results: dict[str, Any] = {"build": meta, "cases": []}
    rng = np.random.default_rng(args.seed + 2)
    pool = pool_size(service)
    # The cases take turns on each question, so a change in the machine's load during the
    # run weighs on all of them alike.
    plan = cases(rng, size)
    timings: list[list[float]] = [[] for _ in plan]
    found: list[list[float]] = [[] for _ in plan]
    for i, question in enumerate(questions):
        for c, (_, kwargs, moments) in enumerate(plan):
            moment = moments[i] if moments else None
            extra = dict(kwargs, as_of=stamp(moment)) if moment else kwargs
            started = time.perf_counter()
            service.recall(question, **extra)
            if i >= args.warmup:
                timings[c].append((time.perf_counter() - started) * 1000)
            found[c].append(_dense_recall(service, matrix, rows, vectors[i], extra, moment,
                                          pool))
        progress.tick(f"question {i + 1}/{len(questions)}")
    for c, (name, _, _) in enumerate(plan):
        results["cases"].append({
            "case": name, "p50_ms": percentile(timings[c], 50),
            "p95_ms": percentile(timings[c], 95),
            "dense_recall_at_10": sum(found[c]) / len(found[c]),
        })
    service.close()
    if server is not None:
        server.cleanup()  # stops it (the data folder stays for the next run)
    results["store"] = "postgres" if args.postgres else "sqlite"
    results["memories"] = size
    results["versions"] = len(rows["number"]) - size
    results["store_bytes"] = None if args.postgres else work.stat().st_size
    return results


def _dense_recall(service: Any, matrix: Any, rows: dict[str, Any], vector: bytes,
                  kwargs: dict[str, Any], moment: int | None, pool: int) -> float:
    """The filtered dense retriever's top 10 against brute force over the passing rows
    (ties at the 10th score count as found)."""
    import numpy as np

    mask = live_rows(rows, moment)
    for tag in kwargs.get("tags", []):
        mask &= tag_rows(rows, tag)
    if "since" in kwargs:
        since = calendar.timegm(time.strptime(kwargs["since"], "%Y-%m-%dT%H:%M:%SZ"))
        mask &= rows["created"] >= since
    candidates = np.flatnonzero(mask)
    if len(candidates) == 0:
        return 1.0
    query = np.frombuffer(vector, "<f4")
    scores = np.asarray(matrix[candidates]) @ query
    tenth = np.sort(scores)[-min(10, len(scores))]
    from tinycontext.testing.retrievers import recall_scope

    hits = service.store.nearest(vector, service.model_key, recall_scope(**kwargs), pool)[:10]
    good = sum(1 for h in hits if h.score >= tenth - 1e-5)
    return good / min(10, len(candidates))


def report(results: dict[str, Any], args: argparse.Namespace) -> None:
    base = results["cases"][0]["p95_ms"]
    print_table(
        ["case", "recall p50 ms", "recall p95 ms", "p95 / unfiltered", "dense recall@10"],
        [[c["case"], f"{c['p50_ms']:.1f}", f"{c['p95_ms']:.1f}", f"{c['p95_ms'] / base:.2f}",
          f"{c['dense_recall_at_10']:.3f}"] for c in results["cases"]],
        title=f"Filtered recall ({results['store']}), {results['memories']:,} memories + "
        f"{results['versions']:,} older versions "
        f"({machine_line(machine_info())})",
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.clean:
        shutil.rmtree(args.store_dir, ignore_errors=True)
        return 0
    results = run(args)
    report(results, args)
    write_json(args.json_out, "filters", args, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
