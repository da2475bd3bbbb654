"""Write throughput, recall latency, dense-search fidelity, cold start, memory and import time.

One throwaway store grows through the checkpoints (default 100 ... 100,000 memories), saved in
batches of 32 memories: by default conversational texts of 15-40 words written by a word
chain learnt from the local LoCoMo file, asked LoCoMo's questions (benchmarks/realistic.py);
`--text synthetic` uses the templated facts of benchmarks/synthetic.py instead. At each
checkpoint: recall latency p50/p95/p99 through the service (query embedding included), and
recall@10 of the store's dense retriever against an exact brute-force cosine over every stored
vector. After the largest checkpoint a fresh process opens the store and answers a recall
(cold start), then keeps recalling; its peak RSS is the memory figure. `import tinycontext`
is timed in fresh interpreters.

    python benchmarks/benchmark_speed.py                       # full run (~10 min at 100k)
    python benchmarks/benchmark_speed.py --sizes 100,1000      # quick run
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import (  # noqa: E402
    Progress,
    RecordingEmbedder,
    add_common_arguments,
    machine_info,
    machine_line,
    make_embedder,
    make_service,
    parse_sizes,
    peak_rss_mb,
    print_table,
    settings,
    throwaway_dir,
    warn_if_busy,
    write_json,
)
from benchmarks._fresh_process import cold_start, import_times  # noqa: E402
from benchmarks.metrics import mean, overlap_at_k, percentile  # noqa: E402
from benchmarks.synthetic import memory_texts, questions, take  # noqa: E402

DEFAULT_SIZES = "100,1000,5000,20000,100000"
DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "locomo10.json"

def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="TinyContext speed benchmark: write throughput, recall latency, dense "
        "recall@10 vs exact cosine, cold start, peak RSS and import time, on a throwaway store.",
    )
    parser.add_argument(
        "--sizes", type=parse_sizes, default=parse_sizes(DEFAULT_SIZES),
        help=f"store-size checkpoints, comma separated, 'k' allowed (default {DEFAULT_SIZES})",
    )
    parser.add_argument("--batch-size", type=int, default=32, help="memories per save call")
    parser.add_argument("--queries", type=int, default=100, help="recalls timed per checkpoint")
    parser.add_argument("--warmup", type=int, default=5, help="untimed recalls per checkpoint")
    parser.add_argument(
        "--cold-recalls", type=int, default=50,
        help="recalls the cold-start process makes after its first answer (peak RSS after them)",
    )
    parser.add_argument("--import-runs", type=int, default=7, help="fresh interpreters timed")
    parser.add_argument("--seed", type=int, default=7, help="seed of the generated memories")
    parser.add_argument(
        "--text", choices=("realistic", "synthetic"), default="realistic",
        help="memory texts: conversational 15-40 word texts with LoCoMo's vocabulary "
        "(default; needs --data) or the templated synthetic facts",
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA,
                        help=f"LoCoMo file for --text realistic (default {DEFAULT_DATA})")
    add_common_arguments(parser)
    args = parser.parse_args(argv)
    if args.text == "realistic" and not args.data.is_file():
        parser.error(f"LoCoMo data not found at {args.data}: pass --data PATH, or "
                     "--text synthetic to use the templated texts")
    return args


def text_source(args: argparse.Namespace) -> tuple[Any, Any]:
    """(memory_texts(seed), questions(n, seed)) of the chosen kind of text."""
    if args.text == "synthetic":
        return memory_texts, questions
    from benchmarks.realistic import RealisticText

    source = RealisticText(args.data)
    return source.memory_texts, source.questions


def cpu_seconds() -> float:
    """CPU time of this process, all threads (less sensitive to other load than wall time)."""
    return time.process_time()


def run(args: argparse.Namespace) -> dict[str, Any]:
    import numpy as np

    from tinycontext.testing.retrievers import pool_size, recall_scope

    progress = Progress("speed", args.quiet)
    warn_if_busy(progress)
    progress(f"timing `import tinycontext` in {args.import_runs} fresh interpreters")
    imports = import_times(args.import_runs)
    texts_of, questions_of = text_source(args)
    queries = questions_of(args.queries + args.warmup, seed=args.seed + 1)
    stream = texts_of(args.seed)
    checkpoints: list[dict[str, Any]] = []
    with throwaway_dir("speed") as folder:
        db = folder / "memories.db"
        recorder = RecordingEmbedder(make_embedder(args.model, folder / "models"))
        service = make_service(db, args.model, embedder=recorder, **settings(args))
        # The exact reference is built from the vectors the store was given (with save-time
        # context they are the mixed ones, not the embedder's output).
        added: dict[str, bytes] = {}
        store_add = service.store.add

        def recording_add(items: Any) -> None:
            store_add(items)
            added.update((item.memory.id, item.vector) for item in items if item.vector)

        service.store.add = recording_add
        # One-off costs belong to the cold start below, not to write throughput: loading
        # the model and the token vocabulary, creating the database file.
        recorder.inner.embed(["load the model before timing"])
        service.tokenizer.count("load the vocabulary before timing")
        service.store.count_pending_embeddings(service.model_key)
        # The ceiling for writes: the embedder alone on the same kind of batches.
        sample = take(texts_of(args.seed + 999), 20 * args.batch_size)
        started, cpu = time.perf_counter(), cpu_seconds()
        for start in range(0, len(sample), args.batch_size):
            recorder.inner.embed(sample[start : start + args.batch_size])
        embed_only = len(sample) / (time.perf_counter() - started)
        embed_only_cpu_ms = 1000 * (cpu_seconds() - cpu) / len(sample)
        progress(f"embedder alone: {embed_only:,.0f} texts/s in batches of {args.batch_size}")
        matrix = np.zeros((max(args.sizes), recorder.dimensions), dtype=np.float32)
        index_of: dict[str, int] = {}  # memory id -> row of matrix
        stored = skipped = 0
        segment_seconds = segment_embed = segment_cpu = 0.0
        segment_start = 0
        for size in args.sizes:
            while stored < size:
                texts = take(stream, min(args.batch_size, size - stored))
                embed_before = recorder.seconds
                started, cpu = time.perf_counter(), cpu_seconds()
                result = service.save([{"content": t} for t in texts]).to_dict()
                segment_seconds += time.perf_counter() - started
                segment_cpu += cpu_seconds() - cpu
                segment_embed += recorder.seconds - embed_before
                for entry in result["saved"]:
                    matrix[stored] = np.frombuffer(added.pop(entry["id"]), dtype=np.float32)
                    index_of[entry["id"]] = stored
                    stored += 1
                skipped += len(result.get("skipped_duplicates", []))
                progress.tick(
                    f"saved {stored:,}/{size:,} "
                    f"({(stored - segment_start) / max(segment_seconds, 1e-9):,.0f}/s)"
                )
            segment_count = stored - segment_start
            progress(f"checkpoint {size:,}: finishing index upkeep, then timing recalls")
            started = time.perf_counter()
            upkeep = getattr(getattr(service, "reindexer", None), "maintain_until_done", None)
            upkeep_steps = upkeep() if upkeep else 0
            upkeep_seconds = time.perf_counter() - started
            for q in queries[: args.warmup]:
                service.recall(q)
            latencies, embed_ms, dense_ms, overlaps = [], [], [], []
            pool, scope = pool_size(service), recall_scope()
            recall_cpu = 0.0
            # Recalls are timed in a loop of their own: the fidelity check below sweeps the
            # exact-search matrix (30 MB at 20k, 150 MB at 100k), which would evict the CPU
            # caches before every timed recall and raise its p95 - a cost of the benchmark,
            # not of a recall.
            for q in queries[args.warmup :]:
                started, cpu = time.perf_counter(), cpu_seconds()
                service.recall(q)
                latencies.append((time.perf_counter() - started) * 1000)
                recall_cpu += cpu_seconds() - cpu
            for q in queries[args.warmup :]:
                started = time.perf_counter()
                vector = recorder.inner.embed([service.config.dense_query_prefix + q])[0]
                embed_ms.append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                hits = service.store.nearest(vector, service.model_key, scope, pool)
                dense_ms.append((time.perf_counter() - started) * 1000)
                approx = [index_of[h.memory.id] for h in hits[:10]]
                overlaps.append(overlap_at_k(matrix, stored, vector, approx, 10))
            row = {
                "size": size,
                "stored": stored,
                "skipped_duplicates": skipped,
                "segment_memories": segment_count,
                "upkeep_before_timing_s": upkeep_seconds,
                "upkeep_steps": upkeep_steps,
                "write_per_s": segment_count / segment_seconds if segment_seconds else None,
                "write_embed_share": segment_embed / segment_seconds if segment_seconds else None,
                "write_cpu_ms_per_memory": 1000 * segment_cpu / segment_count
                if segment_count else None,
                "recall_cpu_ms_mean": 1000 * recall_cpu / max(len(latencies), 1),
                "recall_ms": {
                    "p50": percentile(latencies, 50),
                    "p95": percentile(latencies, 95),
                    "p99": percentile(latencies, 99),
                    "mean": mean(latencies),
                },
                "query_embed_ms_p50": percentile(embed_ms, 50),
                "dense_search_ms": {"p50": percentile(dense_ms, 50),
                                    "p95": percentile(dense_ms, 95)},
                "dense_recall_at_10_vs_exact": mean(overlaps),
                "bench_process_peak_rss_mb": peak_rss_mb(),
            }
            checkpoints.append(row)
            progress(
                f"checkpoint {size:,}: write {row['write_per_s'] or 0:,.0f}/s, recall p95 "
                f"{row['recall_ms']['p95']:.1f} ms, dense recall@10 "
                f"{row['dense_recall_at_10_vs_exact']:.3f}"
            )
            segment_start, segment_seconds, segment_embed, segment_cpu = stored, 0.0, 0.0, 0.0
        service.close()
        progress(f"cold start: a fresh process opens the {stored:,}-memory store and recalls")
        cold = cold_start(db, args.model, queries[args.warmup :], args.cold_recalls,
                          settings(args))
        db_bytes = sum(p.stat().st_size for p in folder.glob("memories.db*"))
    return {
        "checkpoints": checkpoints,
        "cold_start": cold,
        "imports": imports,
        "store_bytes": db_bytes,
        "embed_only_per_s": embed_only,
        "embed_only_cpu_ms_per_text": embed_only_cpu_ms,
        "matrix_mb": matrix.nbytes / 2**20,
    }


def targets(results: dict[str, Any]) -> list[list[Any]]:
    """The performance targets of the engine issue that this run can check."""
    by_size = {c["size"]: c for c in results["checkpoints"]}
    rows: list[list[Any]] = []
    if 100 in by_size and 20000 in by_size:
        ratio = by_size[20000]["recall_ms"]["p95"] / by_size[100]["recall_ms"]["p95"]
        rows.append(["recall p95 at 20k / p95 at 100", "<= 1.5x", f"{ratio:.2f}x", ratio <= 1.5])
    if 100000 in by_size:
        p95 = by_size[100000]["recall_ms"]["p95"]
        rows.append(["recall p95 at 100k", "< 30 ms", f"{p95:.1f} ms", p95 < 30])
    writes = [c["write_per_s"] for c in results["checkpoints"] if c["write_per_s"]]
    if writes:
        worst = min(writes)
        rows.append(["write throughput, batches of 32 (slowest segment)", ">= 300/s",
                     f"{worst:,.0f}/s", worst >= 300])
    imp = results["imports"]["tinycontext"]["median_s"]
    rows.append(["`import tinycontext`", "< 0.3 s", f"{imp:.3f} s", imp < 0.3])
    cold = results["cold_start"]
    size = results["checkpoints"][-1]["stored"]
    rows.append([f"peak RSS, fresh process after recalls on {size:,}", "< 600 MB",
                 f"{cold['peak_rss_mb']:.0f} MB", cold["peak_rss_mb"] < 600])
    if cold.get("model_loads") is not None:
        rows.append(["model loads in a process that recalled", "1", cold["model_loads"],
                     cold["model_loads"] == 1])
    return [[*r[:3], "yes" if r[3] else "NO"] for r in rows]


def report(results: dict[str, Any], args: argparse.Namespace) -> None:
    print(f"TinyContext speed benchmark, model {args.model}, batches of {args.batch_size}, "
          f"{args.queries} recalls per checkpoint (default top_k and budget)")
    print(f"Machine: {machine_line(machine_info())}")
    rows = [
        [
            c["stored"], c["write_per_s"],
            f"{100 * c['write_embed_share']:.0f}%" if c["write_embed_share"] else None,
            c["write_cpu_ms_per_memory"], c["recall_ms"]["p50"], c["recall_ms"]["p95"],
            c["recall_ms"]["p99"], c["recall_cpu_ms_mean"], c["query_embed_ms_p50"],
            c["dense_search_ms"]["p50"],
            c["dense_recall_at_10_vs_exact"], c["upkeep_before_timing_s"],
            c["skipped_duplicates"],
        ]
        for c in results["checkpoints"]
    ]
    print_table(
        ["memories", "write/s", "embed share of write", "write CPU ms/memory", "recall p50 ms",
         "p95 ms", "p99 ms", "recall CPU ms", "query embed p50 ms", "dense search p50 ms",
         "dense recall@10 vs exact", "upkeep s", "skipped dups"],
        rows, "Throughput and latency (write/s: the batches saved since the previous checkpoint)",
    )
    cold = results["cold_start"]
    later = cold.get("later_recall_ms", {})
    size = results["checkpoints"][-1]["stored"]
    print_table(
        ["measure", "value"],
        [
            ["store", f"{size:,} memories, {results['store_bytes'] / 2**20:,.1f} MiB on disk"],
            [f"embedder alone, batches of {args.batch_size}: texts/s, CPU ms per text",
             f"{results['embed_only_per_s']:.0f}, {results['embed_only_cpu_ms_per_text']:.2f}"],
            ["import + build service (s)", cold["import_s"] + cold["build_s"]],
            ["first recall incl. model load (s)", cold["first_recall_s"]],
            ["process spawn to first answer (s)", cold["spawn_to_answer_s"]],
            ["later recalls in that process p50 / p95 (ms)",
             f"{later.get('p50', float('nan')):.1f} / {later.get('p95', float('nan')):.1f}"],
            ["peak RSS of that process (MB)", cold["peak_rss_mb"]],
            ["model loads in that process", cold.get("model_loads")],
            ["`import tinycontext` median / max (s)",
             f"{results['imports']['tinycontext']['median_s']:.3f} / "
             f"{results['imports']['tinycontext']['max_s']:.3f}"],
            ["`import tinycontext.entry.api` median (s)",
             f"{results['imports']['tinycontext.entry.api']['median_s']:.3f}"],
            ["benchmark process peak RSS (MB, holds the exact-search matrix of "
             f"{results['matrix_mb']:.0f} MB)",
             results["checkpoints"][-1]["bench_process_peak_rss_mb"]],
        ],
        "Cold start and memory (fresh process on the largest store)",
    )
    print_table(["target (engine issue)", "wanted", "measured", "met"], targets(results),
                "Targets")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    results = run(args)
    report(results, args)
    write_json(args.json_out, "speed", args, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
