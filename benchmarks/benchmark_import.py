"""Importing other tools' exports: throughput, memory, and LoCoMo recall after an import.

1. Scale: a synthetic ChatGPT export of N user messages (default 100,000; conversations of
   50 messages, texts from benchmarks/realistic.py) imported with `--from chatgpt` into a
   throwaway store with the chosen model: memories/s over the whole import (checking pass
   included), peak RSS of the process.
2. Streaming: a dry run over a larger export (--parse-mb, default 200 MB) before any model
   is loaded: the process's peak RSS growth shows whether reading is constant-memory.
3. LoCoMo: a ChatGPT export built from locomo10.json (read from its local path, never
   copied: each turn a user message `<speaker>: <text>` dated at its session's date, one
   conversation per LoCoMo conversation) imported with `--from chatgpt`, then every QA
   recalled in its conversation's session and scored as benchmark_locomo.py does; beside
   it benchmark_locomo.py's own ingest of the same turn texts (`--render plain`: the date is
   the memory's time, not part of its text), in the same process and settings.

    python benchmarks/benchmark_import.py --json-out import.json
    python benchmarks/benchmark_import.py --messages 2000 --parse-mb 20 --limit 1 --model hash
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import benchmark_locomo  # noqa: E402
from benchmarks._chatgpt_exports import locomo_export, synthetic_export, turn_stamps  # noqa: E402
from benchmarks._common import (  # noqa: E402
    Progress,
    add_common_arguments,
    current_rss_mb,
    machine_info,
    machine_line,
    make_service,
    pct,
    peak_rss_mb,
    print_table,
    settings,
    throwaway_dir,
    write_json,
)
from benchmarks.datasets import load_locomo  # noqa: E402
from benchmarks.metrics import Scoreboard  # noqa: E402
from benchmarks.realistic import RealisticText  # noqa: E402


def imported_by_time(service: Any, session: str) -> dict[str, str]:
    """The ids of a session's imported memories by the time they were dated at: a turn's
    memory is the one dated at its time (each turn of a conversation has its own second)."""
    found: dict[str, str] = {}
    while True:
        page = service.list_page(session_id=session, limit=200, offset=len(found)).to_dict()
        found |= {m["created_at"]: m["id"] for m in page["memories"]}
        if not page["memories"] or len(found) >= page["total_count"]:
            return found


def loads() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def run_streaming(args: argparse.Namespace, folder: Path, progress: Progress) -> dict[str, Any]:
    from tinycontext import import_memories

    texts = RealisticText(args.data).memory_texts(seed=3, distinct=False)
    path = folder / "big.json"
    messages = int(args.parse_mb * 1024 * 1024 / 380)  # ~380 bytes a message as written
    synthetic_export(path, messages, texts)
    size = path.stat().st_size / 1e6
    service = make_service(folder / "dry.db", "hash")
    rss_before, peak_before = current_rss_mb(), peak_rss_mb()
    started = time.perf_counter()
    summary = import_memories(str(path), "chatgpt", dry_run=True, service=service)
    seconds = time.perf_counter() - started
    service.close()
    path.unlink()
    progress(f"dry run over {size:.0f} MB: {seconds:.1f} s")
    return {"file_mb": round(size, 1), "messages": summary["new"], "seconds": round(seconds, 1),
            "mb_per_s": round(size / seconds, 1), "rss_before_mb": round(rss_before, 1),
            "peak_rss_before_mb": round(peak_before, 1),
            "peak_rss_after_mb": round(peak_rss_mb(), 1)}


def run_scale(args: argparse.Namespace, folder: Path, progress: Progress) -> dict[str, Any]:
    from tinycontext import import_memories

    texts = RealisticText(args.data).memory_texts(seed=5)
    path = folder / "conversations.json"
    synthetic_export(path, args.messages, texts)
    service = make_service(folder / "scale.db", args.model, **settings(args))
    before = loads()

    def step(done: int, total: int) -> None:
        if total:
            progress.tick(f"imported {done:,}/{total:,}")

    started = time.perf_counter()
    summary = import_memories(str(path), "chatgpt", service=service,
                              batch_size=args.batch_size, progress=step)
    seconds = time.perf_counter() - started
    service.close()
    handled = summary["imported"] + summary["skipped_duplicates"]
    return {"messages": args.messages, "imported": summary["imported"],
            "skipped_duplicates": summary["skipped_duplicates"],
            "file_mb": round(path.stat().st_size / 1e6, 1), "seconds": round(seconds, 1),
            "memories_per_s": round(handled / seconds, 1),
            "peak_rss_mb": round(peak_rss_mb(), 1), "load_before": before,
            "load_after": loads()}


def run_locomo(args: argparse.Namespace, folder: Path, progress: Progress) -> dict[str, Any]:
    from tinycontext import import_memories
    from tinycontext.testing.retrievers import recall_scope

    conversations = load_locomo(args.data)[: args.limit]
    path = folder / "locomo-conversations.json"
    ids = locomo_export(path, conversations)
    service = make_service(folder / "locomo.db", args.model, **settings(args))
    started = time.perf_counter()
    summary = import_memories(str(path), "chatgpt", service=service,
                              batch_size=args.locomo_batch_size)
    ingest = time.perf_counter() - started
    progress(f"LoCoMo export imported: {summary['imported']} memories in {ingest:.0f} s")
    boards = {"hybrid": Scoreboard(), "hybrid-default-budget": Scoreboard()}
    deepest = max(args.ks)
    for number, conv in enumerate(conversations, start=1):
        cid = ids[conv.sample_id]
        session = f"{conv.sample_id} ({cid[:8]})"
        covers: dict[str, set[str]] = {}
        made = imported_by_time(service, session)
        for turn, stamp in zip(conv.turns, turn_stamps(conv), strict=True):
            if stamp in made:
                covers.setdefault(made[stamp], set()).add(turn.dia_id)
                continue
            # Skipped by dedup: credited to the memory it duplicates, as benchmark_locomo does.
            text = service.config.dense_document_prefix + turn.render(with_date=False)
            vector = service.embedder.embed([text])[0]
            hits = service.store.nearest(vector, service.model_key,
                                         recall_scope(session), 1)
            if hits:
                covers.setdefault(hits[0].memory.id, set()).add(turn.dia_id)
        for qa in conv.qas:
            if not qa.evidence:
                continue
            per_mode: dict[str, dict[str, float]] = {mode: {} for mode in boards}
            for k in args.ks:
                for mode, budget in (("hybrid", benchmark_locomo.UNLIMITED),
                                     ("hybrid-default-budget", None)):
                    found = service.recall(qa.question, session, budget, k).to_dict()
                    ranked = [sorted(covers.get(m["id"], ())) for m in found["memories"]]
                    benchmark_locomo.score(ranked, qa.evidence, k, deepest, per_mode[mode])
            for mode, metrics in per_mode.items():
                boards[mode].add(benchmark_locomo.groups_of(qa.category, number), metrics)
        progress.tick(f"{conv.sample_id}: scored")
    service.close()
    result: dict[str, Any] = {"import": summary | {"samples": None}, "ingest_seconds": ingest,
                              "modes": {}}
    for mode, board in boards.items():
        result["modes"][mode] = {group: {"n": board.count(group), **board.means(group)}
                                 for group in ("overall (1-4)", "all (1-5)")
                                 if board.count(group)}
    # benchmark_locomo's own defaults for every option not named here (a new one included).
    baseline_args = benchmark_locomo.parse_args([])
    vars(baseline_args).update(
        data=args.data, ks=args.ks, limit=args.limit, render="plain", no_ablations=True,
        ablate="none", model=args.model, settings=args.settings, quiet=args.quiet)
    result["baseline"] = benchmark_locomo.run(baseline_args)
    return result


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=benchmark_locomo.DEFAULT_DATA,
                        help="path to locomo10.json (texts and the LoCoMo part)")
    parser.add_argument("--messages", type=int, default=100_000,
                        help="user messages in the synthetic export (default 100,000)")
    parser.add_argument("--batch-size", type=int, default=64, help="import batch size")
    parser.add_argument("--parse-mb", type=float, default=200.0,
                        help="size of the export the streaming dry run reads (MB)")
    parser.add_argument("--limit", type=int, default=None,
                        help="LoCoMo: only the first N conversations")
    parser.add_argument("--locomo-batch-size", type=int, default=32,
                        help="LoCoMo import batch size (benchmark_locomo saves 32 a call)")
    parser.add_argument("--ks", default="5,10,25", help="LoCoMo cut-offs")
    parser.add_argument("--skip", nargs="*", default=[],
                        choices=["streaming", "scale", "locomo"], help="parts to leave out")
    add_common_arguments(parser)
    args = parser.parse_args(argv)
    args.ks = sorted({int(k) for k in args.ks.split(",") if k.strip()})
    if not args.data.is_file():
        parser.error(f"LoCoMo data not found at {args.data}; pass --data PATH")
    return args


def report(results: dict[str, Any], args: argparse.Namespace) -> None:
    print(f"Importing exports, model {args.model}")
    print(f"Machine: {machine_line(machine_info())}")
    if "streaming" in results:
        s = results["streaming"]
        print_table(["export MB", "messages", "seconds", "MB/s", "peak RSS before MB",
                     "peak RSS after MB"],
                    [[s["file_mb"], f"{s['messages']:,}", s["seconds"], s["mb_per_s"],
                      s["peak_rss_before_mb"], s["peak_rss_after_mb"]]],
                    "Streaming: dry run (reading, cleaning, splitting) of a large export")
    if "scale" in results:
        s = results["scale"]
        print_table(["messages", "imported", "duplicates", "seconds", "memories/s",
                     "peak RSS MB", "load before", "load after"],
                    [[f"{s['messages']:,}", f"{s['imported']:,}", s["skipped_duplicates"],
                      s["seconds"], s["memories_per_s"], s["peak_rss_mb"],
                      " ".join(map(str, s["load_before"])),
                      " ".join(map(str, s["load_after"]))]],
                    "Scale: a synthetic ChatGPT export imported (--from chatgpt)")
    if "locomo" in results:
        loc = results["locomo"]
        rows = []
        for mode in ("hybrid", "hybrid-default-budget"):
            for group in ("overall (1-4)", "all (1-5)"):
                mine = loc["modes"][mode].get(group)
                base = loc["baseline"]["modes"][mode].get(group)
                for label, g in (("import --from chatgpt", mine), ("benchmark_locomo", base)):
                    if g:
                        rows.append([f"{mode}, {group}", label, g["n"],
                                     *[pct(g[f"recall@{k}"]) for k in args.ks],
                                     *[pct(g[f"hit@{k}"]) for k in args.ks], g["mrr"]])
        print_table(["questions", "ingest", "n", *[f"R@{k}" for k in args.ks],
                     *[f"hit@{k}" for k in args.ks], f"MRR@{max(args.ks)}"], rows,
                    "LoCoMo after importing it as a ChatGPT export vs the benchmark's own "
                    "ingest (--render plain)")
        imp = loc["import"]
        print(f"\nImported {imp['imported']:,} memories ({imp['skipped_duplicates']} skipped "
              f"as duplicates) in {loc['ingest_seconds']:.0f} s; benchmark_locomo stored "
              f"{loc['baseline']['stats']['stored']:,} "
              f"({loc['baseline']['stats']['skipped_duplicates']} duplicates) in "
              f"{loc['baseline']['ingest_seconds']:.0f} s.")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    progress = Progress("import", args.quiet)
    results: dict[str, Any] = {}
    with throwaway_dir("import") as folder, tempfile.TemporaryDirectory() as _:
        if "streaming" not in args.skip:
            results["streaming"] = run_streaming(args, folder, progress)
        if "scale" not in args.skip:
            results["scale"] = run_scale(args, folder, progress)
        if "locomo" not in args.skip:
            results["locomo"] = run_locomo(args, folder, progress)
    report(results, args)
    write_json(args.json_out, "import", args, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
