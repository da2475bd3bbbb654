"""One SQLite store of 1,000,000 memories: recall latency, dense fidelity, writes, cold start, RSS.

How the store is built (quickly, once, then reused from --store-dir):
  - texts: 15-40 word conversational texts from benchmarks/realistic.py (a word chain learnt
    from the local LoCoMo file), every one distinct;
  - vectors: the real model embeds the first --real-texts of them (default 4,000); every other
    vector is a noisy combination of two of those, w*a + (1-w)*b + Gaussian noise, w in
    [0.5, 0.9], normalised. Cheap to make, and spread out like a real store rather than
    hundreds of near-copies of each source;
  - the memories go in through `SqliteStore.add` in batches of 5,000 with those vectors
    (FTS5, sign bits, int8 codes and vector_log rows exactly as a save writes them), then
    the store's index upkeep runs to completion as the background job would.

Measured on a copy of that store (the pristine one stays for the next run):
  - recall through the service (query embedding included), p50/p95, after a warm-up;
  - the dense retriever alone and its recall@10 against exact brute-force cosine over the
    same 1,000,000 stored vectors (ties at the 10th score count as found);
  - a fresh process opening the store: seconds to its first answer and its peak RSS;
  - writes at that size: batches of 32 new texts saved through the service (real model,
    near-duplicate lookups included).

    python benchmarks/benchmark_million.py --json-out million.json
    python benchmarks/benchmark_million.py --size 200k --store-dir /tmp/tc-200k   # smaller
    python benchmarks/benchmark_million.py --clean         # delete the kept store and exit
"""

from __future__ import annotations

import argparse
import json
import os
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
    peak_rss_mb,
    print_table,
    settings,
    warn_if_busy,
    write_json,
)
from benchmarks._fresh_process import cold_start  # noqa: E402
from benchmarks._million_build import (  # noqa: E402, F401 - the pg benchmarks import these here
    build,
    combined_vectors,
    real_documents,
    row_of,
    stored_items,
)
from benchmarks.benchmark_speed import DEFAULT_DATA  # noqa: E402
from benchmarks.metrics import mean, percentile  # noqa: E402

TARGETS = {"recall_p95_ms": 50.0, "dense_recall_at_10": 0.95, "write_per_s": 200.0,
           "first_answer_s": 3.0, "peak_rss_mb": 1536.0}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=lambda t: parse_sizes(t)[-1], default=1_000_000,
                        help="memories in the store ('k' allowed; default 1,000,000)")
    parser.add_argument("--real-texts", type=int, default=4000,
                        help="texts embedded by the real model (the rest are combinations)")
    parser.add_argument("--noise", type=float, default=0.35,
                        help="norm of the Gaussian noise added to a combination")
    parser.add_argument("--store-dir", type=Path, default=Path("/tmp/tc-million"),
                        help="where the built store and its vectors are kept between runs")
    parser.add_argument("--queries", type=int, default=100, help="timed recalls")
    parser.add_argument("--warmup", type=int, default=10, help="untimed recalls first")
    parser.add_argument("--write-batches", type=int, default=20, help="batches of 32 saved")
    parser.add_argument("--cold-recalls", type=int, default=20,
                        help="recalls of the fresh process after its first answer")
    parser.add_argument("--probe-shares", type=lambda t: [float(x) for x in t.split(",")],
                        default=[], help="also measure the dense search with these shares "
                        "of the store probed by cells (comma-separated, e.g. 0.02,0.08)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo file")
    parser.add_argument("--clean", action="store_true", help="delete --store-dir and exit")
    add_common_arguments(parser)
    return parser.parse_args(argv)


def run(args: argparse.Namespace) -> dict[str, Any]:
    import numpy as np

    from benchmarks.realistic import RealisticText
    from tinycontext.testing.retrievers import pool_size, recall_scope

    progress = Progress("million", args.quiet)
    warn_if_busy(progress)
    folder = args.store_dir
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    source = RealisticText(args.data)
    texts = source.memory_texts(args.seed)
    queries = source.questions(args.queries + args.warmup, seed=args.seed + 1)
    embedder = make_embedder(args.model, folder / "models")
    embedder.embed(["load the model before timing"])
    built = folder / "build.json"
    meta = json.loads(built.read_text()) if built.exists() else None
    if meta is None or meta["size"] != args.size or meta["real_texts"] != args.real_texts:
        build(args, progress, embedder, texts)
        meta = json.loads(built.read_text())
    else:
        for _ in range(args.size - args.real_texts if args.size > args.real_texts else 0):
            next(texts)  # the texts already stored, so the writes below are new ones
    progress(f"store built in {meta['load_s']:.0f} s + upkeep {meta['upkeep_s']:.0f} s; "
             "copying it for this run")
    work = folder / "work.db"
    for leftover in folder.glob("work.db*"):
        leftover.unlink(missing_ok=True)
    shutil.copyfile(folder / "pristine.db", work)
    matrix = np.load(folder / "vectors.npy", mmap_mode="r")
    results: dict[str, Any] = {"build": meta, "store_bytes": work.stat().st_size}
    try:
        service = make_service(work, args.model, embedder=embedder, **settings(args))
        started = time.perf_counter()
        service.recall(queries[0])  # no mirror copy yet: the vectors come from SQL
        results["first_recall_in_process_s"] = time.perf_counter() - started
        for q in queries[1 : args.warmup]:
            service.recall(q)
        latencies = []
        for q in queries[args.warmup :]:
            started = time.perf_counter()
            service.recall(q)
            latencies.append((time.perf_counter() - started) * 1000)
            progress.tick(f"recalls {len(latencies)}/{args.queries}")
        pool, scope = pool_size(service), recall_scope()
        vectors = [embedder.embed([service.config.dense_query_prefix + q])[0]
                   for q in queries[args.warmup :]]
        # The exact 10th score of each query, once (brute force over every stored vector);
        # ties at it count as found, as in overlap_at_k.
        exact = np.ascontiguousarray(matrix)
        tenth = [float(-np.partition(-(exact @ np.frombuffer(v, np.float32)), 9)[9])
                 for v in vectors]
        del exact  # 1.5 GB, needed only for the 10th scores

        def dense_check(label: str, store: Any) -> tuple[list[float], list[float]]:
            dense_ms, overlaps = [], []
            for vector, kth in zip(vectors, tenth, strict=True):
                started = time.perf_counter()
                hits = store.nearest(vector, service.model_key, scope, pool)
                dense_ms.append((time.perf_counter() - started) * 1000)
                rows = [row_of(h.memory.id) for h in hits[:10]]
                scores = matrix[rows] @ np.frombuffer(vector, np.float32)
                overlaps.append(float(np.count_nonzero(scores >= kth - 1e-6)) / 10)
                progress.tick(f"dense checks{label} {len(overlaps)}/{args.queries}")
            return dense_ms, overlaps

        dense_ms, overlaps = dense_check("", service.store)
        results["probe_shares"] = []
        for share in args.probe_shares:  # the fidelity / latency trade-off of the cells
            # The same store opened again with the setting (its own vector mirror, loaded by
            # one untimed search before the timed ones).
            probing = make_service(work, args.model, embedder=embedder, background=False,
                                   **{**settings(args), "dense_probe_share": share})
            probing.store.nearest(vectors[0], service.model_key, scope, pool)
            ms, found = dense_check(f" (share {share})", probing.store)
            probing.close()
            results["probe_shares"].append({
                "share": share, "dense_ms": {"p50": percentile(ms, 50),
                                             "p95": percentile(ms, 95)},
                "dense_recall_at_10_vs_exact": mean(found)})
        written, seconds = 0, 0.0
        for _ in range(args.write_batches):
            batch = [next(texts) for _ in range(32)]
            started = time.perf_counter()
            service.save([{"content": t} for t in batch])
            seconds += time.perf_counter() - started
            written += len(batch)
            progress.tick(f"saved {written}/{32 * args.write_batches}")
        results.update({
            "recall_ms": {"p50": percentile(latencies, 50), "p95": percentile(latencies, 95),
                          "p99": percentile(latencies, 99), "mean": mean(latencies)},
            "dense_ms": {"p50": percentile(dense_ms, 50), "p95": percentile(dense_ms, 95)},
            "dense_recall_at_10_vs_exact": mean(overlaps),
            "dense_recall_at_10_min": min(overlaps),
            "write_per_s": written / seconds,
            "bench_process_peak_rss_mb": peak_rss_mb(),
        })
        service.close()  # a large mirror keeps its copy for the next process here
        progress("cold start: a fresh process opens the store and recalls")
        results["cold_start"] = cold_start(work, args.model, queries, args.cold_recalls,
                                           settings(args))
        results["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
        # The run's own dense_probe_share (None: the store's default, 0.03).
        results["probe_share"] = service.config.dense_probe_share
    finally:
        for leftover in folder.glob("work.db*"):  # the store, its WAL and any mirror copy
            leftover.unlink(missing_ok=True)
    return results


def report(results: dict[str, Any], args: argparse.Namespace) -> None:
    cold = results["cold_start"]
    rows = [
        ["recall p95 (ms)", results["recall_ms"]["p95"], TARGETS["recall_p95_ms"],
         results["recall_ms"]["p95"] <= TARGETS["recall_p95_ms"]],
        ["recall p50 (ms)", results["recall_ms"]["p50"], None, None],
        ["dense search p95 (ms)", results["dense_ms"]["p95"], None, None],
        ["dense recall@10 vs exact", results["dense_recall_at_10_vs_exact"],
         TARGETS["dense_recall_at_10"],
         results["dense_recall_at_10_vs_exact"] >= TARGETS["dense_recall_at_10"]],
        ["writes per s (batches of 32)", results["write_per_s"], TARGETS["write_per_s"],
         results["write_per_s"] >= TARGETS["write_per_s"]],
        ["fresh process: start to first answer (s)", cold["to_first_answer_s"],
         TARGETS["first_answer_s"], cold["to_first_answer_s"] <= TARGETS["first_answer_s"]],
        ["fresh process: first recall alone (s)", cold["first_recall_s"], None, None],
        ["first recall, vectors read from SQL (s)", results["first_recall_in_process_s"], None,
         None],
        ["fresh process: peak RSS (MB)", cold["peak_rss_mb"], TARGETS["peak_rss_mb"],
         cold["peak_rss_mb"] <= TARGETS["peak_rss_mb"]],
        ["store file (GB)", results["store_bytes"] / 2**30, None, None],
    ]
    print_table(["measure", "value", "target", "met"], rows,
                f"{args.size:,} memories, {machine_line(machine_info())}")
    if results["probe_shares"]:
        print_table(["share probed", "dense p50 ms", "dense p95 ms", "recall@10"], [
            [r["share"], r["dense_ms"]["p50"], r["dense_ms"]["p95"],
             r["dense_recall_at_10_vs_exact"]] for r in results["probe_shares"]],
            "cells probed (this run's: "
            f"{results['probe_share'] or 'the store default'})")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.clean:
        shutil.rmtree(args.store_dir, ignore_errors=True)
        return 0
    results = run(args)
    report(results, args)
    write_json(args.json_out, "million", args, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
