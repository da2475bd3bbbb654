"""Questions about two events in time, on synthetic multi-session histories (no LLM).

Our own made-up data (benchmarks/event_histories.py), not a published benchmark: each user's
history is a run of conversations on different days, plain user turns with no date in the
text, each conversation saved while the service's clock reads its date (so created_at
carries the date, as LoCoMo's plain render does). The questions ask about the order of two
of the user's events or the time between them; the answer needs the two conversations
where they were told. Control questions about one event each must come back unchanged.

For each question, recall (scoped to the user) at top 5 and top 10 with the default
settings and with each `--compare` variant, on the same store:
- both: both answer conversations have a memory in the top k (session level),
- told: both events' own turns are in the top k,
- either: at least one answer conversation is in the top k;
for control questions, the share whose top 10 is identical to the default's.

    python benchmarks/benchmark_event_pairs.py --compare recall_event_pairs=true
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from datetime import timedelta
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
from benchmarks.benchmark_locomo import SessionClock  # noqa: E402
from benchmarks.event_histories import histories  # noqa: E402

UNLIMITED = 10**9
KS = (5, 10)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Order and elapsed-time questions about two events told in different "
        "conversations (synthetic histories, plain turns, created_at = conversation date).")
    parser.add_argument("--users", type=int, default=40, help="histories (default 40)")
    parser.add_argument("--sessions", type=int, default=50,
                        help="conversations per history (default 50)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--compare", metavar="KEY=VALUE[,KEY=VALUE]", action="append",
                        default=[], help="also recall every question with these settings on "
                        "the same store (repeatable)")
    add_common_arguments(parser)
    args = parser.parse_args(argv)
    args.variants = parse_compare(args.compare)
    return args


def run(args: argparse.Namespace) -> dict[str, Any]:
    from tinycontext.testing.questions import event_pair

    progress = Progress("event-pairs", args.quiet)
    data = histories(args.users, args.seed, args.sessions)
    modes = ["default", *args.variants]
    counts: dict[str, dict[str, int]] = {m: defaultdict(int) for m in modes}
    stats = {"users": len(data), "memories": 0, "paired": 0, "triggered": 0, "controls": 0,
             "controls_triggered": 0}
    with throwaway_dir("eventpairs") as folder:
        clock = SessionClock()
        service = make_service(folder / "memories.db", args.model, clock=clock,
                               **settings(args))
        for number, history in enumerate(data, start=1):
            session_of: dict[str, int] = {}
            content_of: dict[str, str] = {}
            for index, conversation in enumerate(history.conversations):
                clock.current = conversation.when
                saved = service.save([{"content": t} for t in conversation.turns],
                                     session_id=history.user).to_dict()
                for entry in saved["saved"]:
                    session_of[entry["id"]] = index
                    content_of[entry["id"]] = conversation.turns[entry["index"]]
                stats["memories"] += len(saved["saved"])
            clock.current = history.conversations[-1].when + timedelta(days=3)
            for question in history.questions:
                key = "paired" if question.paired else "controls"
                stats[key] += 1
                if event_pair(question.text) is not None:
                    stats["triggered" if question.paired else "controls_triggered"] += 1
                tops: dict[str, list[str]] = {}
                for mode in modes:
                    update = args.variants.get(mode, {})
                    for k in KS:
                        with settings_swapped(service, update):
                            found = service.recall(question.text, history.user, UNLIMITED, k)
                        ids = [m["id"] for m in found.to_dict()["memories"]]
                        tops[f"{mode}@{k}"] = ids
                        if not question.paired:
                            continue
                        sessions = {session_of[i] for i in ids}
                        wanted = set(question.sessions)
                        c = counts[mode]
                        c[f"both@{k}"] += wanted <= sessions
                        c[f"either@{k}"] += bool(wanted & sessions)
                        c[f"told@{k}"] += set(question.told) <= {content_of[i] for i in ids}
                if not question.paired:
                    for mode in modes[1:]:
                        counts[mode]["controls_same"] += tops[f"{mode}@10"] == tops["default@10"]
            progress.tick(f"{history.user} ({number}/{len(data)}) asked")
        service.close()
    return {"stats": stats, "counts": {m: dict(c) for m, c in counts.items()}}


def report(results: dict[str, Any], args: argparse.Namespace) -> None:
    s = results["stats"]
    print(f"Event pairs on synthetic histories (ours), model {args.model}: {s['users']} users x "
          f"{args.sessions} conversations, {s['memories']:,} memories; {s['paired']} order / "
          f"elapsed-time questions ({s['triggered']} read as two events), {s['controls']} "
          f"control questions ({s['controls_triggered']} read as two events)")
    print(f"Machine: {machine_line(machine_info())}")
    rows = []
    for mode, c in results["counts"].items():
        rows.append([mode, *[pct(c.get(f"{what}@{k}", 0) / max(s["paired"], 1))
                             for what in ("both", "told", "either") for k in KS],
                     None if mode == "default" else
                     pct(c.get("controls_same", 0) / max(s["controls"], 1))])
    print_table(["settings", *[f"{w} top {k}" for w in ("both", "told", "either") for k in KS],
                 "controls unchanged"], rows,
                "Share of order / elapsed-time questions with both answer conversations (both), "
                "both events' own turns (told) and at least one answer conversation (either) in "
                "the top k (percent)")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    results = run(args)
    report(results, args)
    write_json(args.json_out, "event_pairs", args, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
