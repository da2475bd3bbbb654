"""LoCoMo retrieval (no LLM): every dialog turn saved as a memory, every QA recalled.

Each turn becomes one memory `[<session date>] <speaker>: <text>` (plus
`[shared a photo: <caption>]` when the turn shares an image), saved in order in batches of up
to 32 (`--render plain`: the turn's text alone, saved while the service's clock reads the
session's date, so created_at carries the date the text no longer does), each conversation
under its own session_id in one throwaway store. A turn that dedup
skips credits the memory it duplicates. Each QA's question is recalled in its conversation's
session; a retrieved memory counts for every turn it stands for. Metrics against the
`evidence` turn ids: recall@k (share of evidence turns retrieved), hit@k (any), MRR (first
evidence turn within the deepest k). Categories 1-4 form "overall"; 5 (adversarial) is
reported separately and in "all 1-5". QA items whose evidence names no turn are skipped.
Conversations 1-5 (the half recall was tuned on) and 6-10 (the held-back check) are also
reported apart. `--ablate LEVER` turns one part of the default ranking off for the whole run
(see ABLATIONS), for the ablation table in docs/benchmarks.md.

    python benchmarks/benchmark_locomo.py --data ../shared/data/locomo10.json
    python benchmarks/benchmark_locomo.py --ablate stemming
    python benchmarks/benchmark_locomo.py --render plain --skip 5   # the check half only
    python benchmarks/benchmark_locomo.py --compare recall_feedback_inhand_weight=0.5
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from datetime import UTC, datetime, timedelta
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
    pct,
    print_table,
    settings,
    throwaway_dir,
    write_json,
)
from benchmarks._compare import parse_compare, settings_swapped  # noqa: E402
from benchmarks.datasets import LOCOMO_CATEGORIES, LocomoConversation, load_locomo  # noqa: E402
from benchmarks.metrics import (  # noqa: E402
    Scoreboard,
    hit_at_k,
    mean,
    recall_at_k,
    reciprocal_rank,
)

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "locomo10.json"
UNLIMITED = 10**9
ANCHORS = [
    ("DRAGON (LoCoMo paper, all categories)", {5: 56.7, 10: 66.2, 25: 76.7}),
    ("plain BM25 over turns (measured on this data)", {5: 45.2, 10: 52.6}),
]
MODES = {
    "hybrid": "TinyContext recall, budget large enough that only top_k limits",
    "hybrid-default-budget": "TinyContext recall at the default token budget",
    "dense-only": "ablation: the store's dense retriever alone",
    "bm25-only": "ablation: the store's BM25 retriever alone",
}


ABLATIONS = {
    "none": "the default ranking",
    "score-fusion": "reciprocal rank fusion instead of score fusion (recall_fusion=rrf)",
    "stemming": "keyword side without stemming (words must match as written)",
    "keyword-context": "no context words in the keyword index",
    "dense-context": "vectors without the context memory mixed in",
    "context": "no save-time context at all (save_context_minutes=0)",
    "late-interaction": "no token-level rescoring (recall_late_interaction=false)",
    "dense-lead": "no bonus for the model's first choice's margin over its second",
    "date-cues": "no boost for memories dated inside the period a question names",
}
HALVES = ((1, 5, "tune"), (6, 10, "check"))


def ablate(lever: str) -> dict[str, Any]:
    """The config overrides that switch one lever off (stemming, which has no setting, is
    switched off around the run instead: main)."""
    if lever == "score-fusion":
        return {"recall_fusion": "rrf"}
    if lever == "context":
        return {"save_context_minutes": 0}
    if lever == "late-interaction":
        return {"recall_late_interaction": False}
    if lever == "dense-lead":
        return {"recall_dense_lead_weight": 0.0}
    if lever == "date-cues":
        return {"recall_date_cue_weight": 0.0}
    if lever == "dense-context":
        return {"save_context_dense_weight": 0.0}
    if lever == "keyword-context":
        return {"recall_keyword_context_weight": 0.0}
    return {}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="TinyContext on LoCoMo turn retrieval (no LLM): recall@k, hit@k and MRR "
        "per category, at an unlimited and at the default token budget, on a throwaway store.",
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA,
                        help=f"path to locomo10.json (default {DEFAULT_DATA})")
    parser.add_argument("--ks", default="5,10,25", help="cut-offs, comma separated")
    parser.add_argument("--limit", type=int, default=None,
                        help="only the first N conversations (quick runs)")
    parser.add_argument("--skip", type=int, default=0,
                        help="leave out the first N conversations (--skip 5: the check half; "
                        "keyword weights are the store's, so compare with a run that skipped "
                        "the same)")
    parser.add_argument(
        "--render", choices=("dated", "plain"), default="dated",
        help="turn text: '[<session date>] <speaker>: <text>' (default), or 'plain': the "
        "text alone, each memory's created_at the session's date",
    )
    parser.add_argument("--no-ablations", action="store_true",
                        help="skip the dense-only and BM25-only retriever ablations")
    parser.add_argument("--ablate", choices=list(ABLATIONS), default="none",
                        help="turn one lever of the default ranking off: "
                        + "; ".join(f"{k}: {v}" for k, v in ABLATIONS.items()))
    parser.add_argument("--compare", metavar="KEY=VALUE[,KEY=VALUE]", action="append",
                        default=[], help="also recall every question with these settings "
                        "(recall_* keys) on the same store, as a mode of its own at an "
                        "unlimited budget: off/on pairs on identical data (repeatable)")
    parser.add_argument("--event-pair-groups", action="store_true",
                        help="also report the questions (categories 1-4) that recall reads as "
                        "about two events in time (tinycontext.testing.questions.event_pair), per "
                        "half, all and those whose evidence spans two or more sessions")
    add_common_arguments(parser)
    args = parser.parse_args(argv)
    args.variants = parse_compare(args.compare)
    args.ks = sorted({int(k) for k in args.ks.split(",") if k.strip()})
    if not args.data.is_file():
        parser.error(f"LoCoMo data not found at {args.data}; pass --data PATH")
    return args


class SessionClock:
    """The service's clock (a public port of build_service): the plain shape sets it to each
    session's date before saving its turns, one second further for each save call."""

    def __init__(self) -> None:
        self.current: datetime | None = None

    def now(self) -> datetime:
        return self.current if self.current is not None else datetime.now(UTC)


def ingest(service: Any, conv: LocomoConversation, progress: Progress,
           with_date: bool = True, clock: SessionClock | None = None) -> dict[str, Any]:
    """Save the turns; returns memory id -> turn ids it stands for, and counts."""
    covers: dict[str, set[str]] = {}
    by_ref: dict[str, str] = {}
    skipped = 0
    # A save call holds turns of one session only, so each takes its session's date.
    chunks = [
        [t for t in conv.turns[start : start + 32] if t.session == session]
        for session in sorted({t.session for t in conv.turns})
        for start in range(0, len(conv.turns), 32)
    ] if clock is not None else [conv.turns[s : s + 32] for s in range(0, len(conv.turns), 32)]
    done = 0
    for number, chunk in enumerate(c for c in chunks if c):
        if clock is not None:
            when = chunk[0].when()
            clock.current = None if when is None else when + timedelta(seconds=number)
        result = service.save([{"content": t.render(with_date)} for t in chunk],
                              session_id=conv.sample_id).to_dict()
        for entry in result["saved"]:
            covers[entry["id"]] = {chunk[entry["index"]].dia_id}
            by_ref[entry["ref"]] = entry["id"]
        for entry in result.get("skipped_duplicates", []):
            covers[by_ref[entry["duplicate_of"]]].add(chunk[entry["index"]].dia_id)
            skipped += 1
        done += len(chunk)
        progress.tick(f"{conv.sample_id}: saved {done}/{len(conv.turns)} turns")
    return {"covers": covers, "skipped": skipped}


def groups_of(category: int, conversation: int) -> list[str]:
    """The report rows a question counts in (conversation numbered from 1)."""
    name = f"{category} {LOCOMO_CATEGORIES.get(category, 'unknown')}"
    half = next(f"{label} {lo}-{hi}" for lo, hi, label in HALVES if lo <= conversation <= hi) \
        if conversation <= HALVES[-1][1] else "conversations 11+"
    if category in (1, 2, 3, 4):
        return ["overall (1-4)", name, "all (1-5)", f"{half}: overall (1-4)", f"{half}: {name}",
                f"{half}: all (1-5)"]
    return [name, "all (1-5)", f"{half}: {name}", f"{half}: all (1-5)"]


EVENT_PAIR_GROUPS = ("event pairs", "event pairs, evidence in 2+ sessions")


def event_pair_groups(question: str, category: int, evidence: tuple[str, ...],
                      conversation: int) -> list[str]:
    """The extra rows of a question recall reads as about two events (--event-pair-groups)."""
    from tinycontext.testing.questions import event_pair

    if category not in (1, 2, 3, 4) or event_pair(question) is None:
        return []
    half = next((f"{label} {lo}-{hi}" for lo, hi, label in HALVES if lo <= conversation <= hi),
                "conversations 11+")
    names = [EVENT_PAIR_GROUPS[0]]
    if len({e.split(":")[0] for e in evidence}) > 1:
        names.append(EVENT_PAIR_GROUPS[1])
    return [g for name in names for g in (name, f"{half}: {name}")]


def score(ranked: list[list[str]], gold: tuple[str, ...], k: int, deepest: int,
          metrics: dict[str, float]) -> None:
    metrics[f"recall@{k}"] = recall_at_k(ranked, gold, k)
    metrics[f"hit@{k}"] = hit_at_k(ranked, gold, k)
    if k == deepest:
        metrics["mrr"] = reciprocal_rank(ranked, gold, k)


def run(args: argparse.Namespace) -> dict[str, Any]:
    from tinycontext.testing.retrievers import recall_scope, retrievers_alone

    progress = Progress("locomo", args.quiet)
    conversations = load_locomo(args.data)[: args.limit][args.skip :]
    modes = list(MODES) if not args.no_ablations else ["hybrid", "hybrid-default-budget"]
    modes += list(args.variants)
    boards = {mode: Scoreboard() for mode in modes}
    deepest = max(args.ks)
    stats: dict[str, Any] = {"conversations": len(conversations), "turns": 0, "stored": 0,
                             "skipped_duplicates": 0, "qa_total": 0, "qa_scored": 0,
                             "qa_without_evidence": 0, "unknown_evidence_ids": 0}
    budget_tokens: list[int] = []
    budget_returned: list[int] = []
    latencies: list[float] = []
    ingest_seconds = 0.0
    overrides = {**ablate(args.ablate), **settings(args)}
    with throwaway_dir("locomo") as folder:
        clock = SessionClock() if args.render == "plain" else None
        service = make_service(folder / "memories.db", args.model, clock=clock, **overrides)
        for number, conv in enumerate(conversations, start=1 + args.skip):
            started = time.perf_counter()
            saved = ingest(service, conv, progress, args.render == "dated", clock)
            ingest_seconds += time.perf_counter() - started
            covers = saved["covers"]
            stats["turns"] += len(conv.turns)
            stats["stored"] += len(covers)
            stats["skipped_duplicates"] += saved["skipped"]
            progress(f"{conv.sample_id} ({number}/{len(conversations) + args.skip}): "
                     f"{len(conv.turns)} turns "
                     f"saved, {saved['skipped']} as duplicates; asking {len(conv.qas)} questions")
            scope = recall_scope(conv.sample_id)
            for qa in conv.qas:
                stats["qa_total"] += 1
                stats["unknown_evidence_ids"] += len(qa.unknown_evidence)
                if not qa.evidence:
                    stats["qa_without_evidence"] += 1
                    continue
                stats["qa_scored"] += 1
                per_mode: dict[str, dict[str, float]] = {mode: {} for mode in modes}
                for k in args.ks:
                    started = time.perf_counter()
                    full = service.recall(qa.question, conv.sample_id, UNLIMITED, k).to_dict()
                    latencies.append(time.perf_counter() - started)
                    ranked = [sorted(covers[m["id"]]) for m in full["memories"]]
                    score(ranked, qa.evidence, k, deepest, per_mode["hybrid"])
                    cut = service.recall(qa.question, conv.sample_id, None, k).to_dict()
                    ranked = [sorted(covers[m["id"]]) for m in cut["memories"]]
                    score(ranked, qa.evidence, k, deepest, per_mode["hybrid-default-budget"])
                    if k == deepest:
                        budget_tokens.append(cut["total_tokens"])
                        budget_returned.append(len(cut["memories"]))
                    for name, update in args.variants.items():
                        with settings_swapped(service, update):
                            found = service.recall(qa.question, conv.sample_id, UNLIMITED, k)
                        ranked = [sorted(covers[m["id"]]) for m in found.to_dict()["memories"]]
                        score(ranked, qa.evidence, k, deepest, per_mode[name])
                if "dense-only" in per_mode:
                    # Each retriever exactly as recall calls it (same pool), cut to deepest k.
                    alone = retrievers_alone(service, qa.question, scope, deepest)
                    for mode, hits in (("dense-only", alone.dense), ("bm25-only", alone.keyword)):
                        ranked = [sorted(covers[h.memory.id]) for h in hits[:deepest]]
                        for k in args.ks:
                            score(ranked, qa.evidence, k, deepest, per_mode[mode])
                groups = groups_of(qa.category, number)
                if args.event_pair_groups:
                    groups += event_pair_groups(qa.question, qa.category, qa.evidence, number)
                for mode, metrics in per_mode.items():
                    boards[mode].add(groups, metrics)
                progress.tick(f"{conv.sample_id}: {stats['qa_scored']:,} questions scored")
        service.close()
    categories = [f"{c} {n}" for c, n in LOCOMO_CATEGORIES.items()]
    halves = [f"{label} {lo}-{hi}: {group}" for lo, hi, label in HALVES
              for group in ("overall (1-4)", *categories, "all (1-5)")]
    order = ["overall (1-4)"] + [f"{c} {n}" for c, n in LOCOMO_CATEGORIES.items()] \
        + ["all (1-5)"] + halves
    order += [f"{half}{name}" for name in EVENT_PAIR_GROUPS
              for half in ("", *(f"{label} {lo}-{hi}: " for lo, hi, label in HALVES))]
    results: dict[str, Any] = {"stats": stats, "modes": {}}
    for mode, board in boards.items():
        results["modes"][mode] = {
            group: {"n": board.count(group), **board.means(group)}
            for group in order if board.count(group)
        }
    results["default_budget"] = {
        f"mean_tokens_at_top_k_{deepest}": mean(budget_tokens),
        f"mean_memories_returned_at_top_k_{deepest}": mean(budget_returned),
    }
    results["ingest_seconds"] = ingest_seconds
    results["ingest_turns_per_s"] = stats["turns"] / ingest_seconds if ingest_seconds else None
    results["recall_ms_mean"] = 1000 * mean(latencies)
    return results


def report(results: dict[str, Any], args: argparse.Namespace) -> None:
    s = results["stats"]
    ks = args.ks
    print(f"TinyContext on LoCoMo turn retrieval, model {args.model} ({args.data.name}), "
          f"ablation: {args.ablate} ({ABLATIONS[args.ablate]})")
    print(f"Machine: {machine_line(machine_info())}")
    print(f"{s['conversations']} conversations, {s['turns']:,} turns -> {s['stored']:,} memories "
          f"({s['skipped_duplicates']} skipped as duplicates, credited to what they duplicate); "
          f"{s['qa_scored']:,} of {s['qa_total']:,} questions scored ({s['qa_without_evidence']} "
          f"without usable evidence, {s['unknown_evidence_ids']} evidence ids naming no turn); "
          f"ingest {results['ingest_turns_per_s'] or 0:,.0f} turns/s, recall "
          f"{results['recall_ms_mean']:.1f} ms mean")
    headers = ["questions", "n", *[f"R@{k}" for k in ks], *[f"hit@{k}" for k in ks],
               f"MRR@{max(ks)}"]
    for mode, groups in results["modes"].items():
        rows = [
            [group, g["n"], *[pct(g[f"recall@{k}"]) for k in ks],
             *[pct(g[f"hit@{k}"]) for k in ks], g["mrr"]]
            for group, g in groups.items()
        ]
        what = MODES.get(mode, "the same recall with these settings, same store")
        print_table(headers, rows, f"{mode}: {what} (percent; MRR 0-1)")
    budget = results["default_budget"]
    print(f"\nDefault budget at top_k {max(ks)}: "
          + ", ".join(f"{k.replace('_', ' ')} {v:.1f}" for k, v in budget.items()))
    rows = [[name, *[f"{anchor[k]:.1f}" if k in anchor else None for k in ks]]
            for name, anchor in ANCHORS]
    for mode, groups in results["modes"].items():
        for group in ("all (1-5)", "overall (1-4)"):
            if group in groups:
                rows.append([f"TinyContext {mode}, {group}",
                             *[pct(groups[group][f"recall@{k}"]) for k in ks]])
    print_table(["retriever", *[f"R@{k}" for k in ks]], rows, "Against the anchors (recall@k, %)")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from tinycontext.testing.ablation import without_stemming

    with without_stemming() if args.ablate == "stemming" else contextlib.nullcontext():
        results = run(args)
    report(results, args)
    write_json(args.json_out, "locomo", args, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
