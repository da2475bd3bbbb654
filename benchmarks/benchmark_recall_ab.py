"""Recall latency of settings variants, interleaved on one store: what a recall setting costs.

Two steps, so that building the store stays out of a timing run:

    python benchmarks/benchmark_recall_ab.py build --store ab/memories.db --size 20000
    python benchmarks/benchmark_recall_ab.py time --store ab/memories.db \\
        --compare recall_feedback_inhand_weight=0.5

`build` saves `--size` conversational texts of 15-40 words (benchmarks/realistic.py, the
texts of benchmark_speed.py) in batches of 32 into a new store. `time` opens it once and asks
the same LoCoMo questions with the default settings and with each `--compare` variant, one
after another for each question (the order reversed every other question, so neither side
always runs first with warm caches), counting no recall unless `--count` (the service
counts each recall by default, a write of the recalled memories' counts); the first
`--warmup` questions are not timed. Prints p50 / p95 / mean per variant and each variant's
change against the default. Variants are recall settings swapped into the running service
(benchmarks/_compare). `--write-between` saves one memory before every recall (not in the
recall's time, timed on its own), so that no recall finds the store as an earlier one left
it.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import (  # noqa: E402
    Progress,
    add_common_arguments,
    machine_info,
    machine_line,
    make_service,
    print_table,
    settings,
    write_json,
)
from benchmarks._compare import parse_compare, settings_swapped  # noqa: E402
from benchmarks.metrics import percentile  # noqa: E402
from benchmarks.realistic import RealisticText  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "locomo10.json"
DEFAULT = "default"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Recall latency of settings variants, interleaved on one prebuilt store.")
    parser.add_argument("step", choices=("build", "time"),
                        help="build: fill a new store; time: time recall variants on it")
    parser.add_argument("--store", type=Path, required=True, help="the store's database file")
    parser.add_argument("--size", type=int, default=20_000, help="build: memories to save")
    parser.add_argument("--seed", type=int, default=7, help="build: seed of the texts")
    parser.add_argument("--queries", type=int, default=300, help="time: questions asked")
    parser.add_argument("--warmup", type=int, default=20, help="time: questions not timed")
    parser.add_argument("--write-between", action="store_true",
                        help="time: save one memory (untimed) before every recall, as an agent "
                        "that saves between recalls does (each recall then finds the store "
                        "changed); the store grows by one memory per recall")
    parser.add_argument("--count", action="store_true",
                        help="time: count each recall, as the service does by default (a "
                        "plain store writes the counts in a commit of their own)")
    parser.add_argument("--compare", metavar="KEY=VALUE[,KEY=VALUE]", action="append",
                        default=[], help="time: a variant of recall settings (repeatable)")
    parser.add_argument("--event-pair-questions", action="store_true",
                        help="time: ask questions about the order of two events or the time "
                        "between them (benchmarks/event_histories.py's phrasings) instead of "
                        "LoCoMo's")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA,
                        help=f"path to locomo10.json (default {DEFAULT_DATA})")
    add_common_arguments(parser)
    args = parser.parse_args(argv)
    args.variants = parse_compare(args.compare)
    if not args.data.is_file():
        parser.error(f"LoCoMo data not found at {args.data}; pass --data PATH")
    if args.step == "build" and args.store.exists():
        parser.error(f"{args.store} exists already: build makes a new store")
    if args.step == "time" and not args.store.is_file():
        parser.error(f"no store at {args.store}: run the build step first")
    return args


def build(args: argparse.Namespace) -> dict[str, Any]:
    progress = Progress("build", args.quiet)
    texts = RealisticText(args.data).memory_texts(args.seed)
    args.store.parent.mkdir(parents=True, exist_ok=True)
    service = make_service(args.store, args.model, **settings(args))
    started = time.perf_counter()
    try:
        for done in range(0, args.size, 32):
            count = min(32, args.size - done)
            service.save([{"content": next(texts)} for _ in range(count)])
            progress.tick(f"saved {done + count:,}/{args.size:,}")
    finally:
        service.close()
    return {"memories": args.size, "seconds": time.perf_counter() - started}


def event_pair_questions(count: int, seed: int = 8) -> list[str]:
    """Order and elapsed-time questions about two of the synthetic histories' events."""
    import random

    from benchmarks.event_histories import EVENTS, TEMPLATES, fill

    rng = random.Random(seed)
    return [fill(rng.choice(TEMPLATES), *rng.sample(EVENTS, 2)) for _ in range(count)]


def timed(args: argparse.Namespace) -> dict[str, Any]:
    progress = Progress("time", args.quiet)
    source = RealisticText(args.data)
    questions = event_pair_questions(args.queries) if args.event_pair_questions \
        else source.questions(args.queries, seed=8)
    # Not the build's seed: texts the store does not hold yet.
    fresh = source.memory_texts(args.seed + 1000)
    variants: dict[str, dict[str, Any]] = {DEFAULT: {}, **args.variants}
    times: dict[str, list[float]] = {name: [] for name in variants}
    saves: list[float] = []
    service = make_service(args.store, args.model, **settings(args))
    load_before = os.getloadavg()
    try:
        for index, question in enumerate(questions):
            order = list(variants.items())
            for name, update in order if index % 2 else order[::-1]:
                if args.write_between:
                    started = time.perf_counter()
                    service.save([{"content": next(fresh)}])
                    if index >= args.warmup:
                        saves.append(1000 * (time.perf_counter() - started))
                with settings_swapped(service, update):
                    started = time.perf_counter()
                    service.recall(question, count=args.count)
                    elapsed = time.perf_counter() - started
                if index >= args.warmup:
                    times[name].append(1000 * elapsed)
            progress.tick(f"{index + 1}/{len(questions)} questions")
    finally:
        service.close()
    load_after = os.getloadavg()
    from tinycontext.testing.questions import event_pair

    return {
        "write_between": args.write_between,
        "count": args.count,
        "questions_read_as_event_pairs": sum(event_pair(q) is not None for q in questions),
        "questions": len(questions),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
        "timed_per_variant": len(times[DEFAULT]),
        "variants": {name: {"p50_ms": percentile(v, 50), "p95_ms": percentile(v, 95),
                            "mean_ms": sum(v) / len(v)} for name, v in times.items()},
        "saves": {"p50_ms": percentile(saves, 50), "p95_ms": percentile(saves, 95),
                  "mean_ms": sum(saves) / len(saves)} if saves else None,
    }


def report(results: dict[str, Any]) -> None:
    print(f"Machine: {machine_line(machine_info())}")
    print(f"load average {results['load_average_before']} before, "
          f"{results['load_average_after']} after; {results['timed_per_variant']} recalls "
          "timed per variant, interleaved"
          + ("; one memory saved before each recall" if results["write_between"] else "")
          + ("; each recall counted" if results.get("count") else "")
          + f"; {results['questions_read_as_event_pairs']} of {results['questions']} questions "
          "read as about two events")
    base = results["variants"][DEFAULT]
    rows = [
        [name, f"{v['p50_ms']:.2f}", f"{v['p95_ms']:.2f}", f"{v['mean_ms']:.2f}",
         f"{100 * (v['p50_ms'] / base['p50_ms'] - 1):+.1f}%",
         f"{100 * (v['p95_ms'] / base['p95_ms'] - 1):+.1f}%"]
        for name, v in results["variants"].items()
    ]
    print_table(["variant", "p50 ms", "p95 ms", "mean ms", "p50 vs default", "p95 vs default"],
                rows, "Recall latency, interleaved on one store")
    if results.get("saves"):
        saves = results["saves"]
        print(f"\nsaves between recalls (one memory each): p50 {saves['p50_ms']:.2f} ms, "
              f"p95 {saves['p95_ms']:.2f} ms, mean {saves['mean_ms']:.2f} ms")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.step == "build":
        result = build(args)
        print(f"built {result['memories']:,} memories in {result['seconds']:.0f} s at {args.store}")
        return 0
    results = timed(args)
    report(results)
    write_json(args.json_out, "recall_ab", args, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
