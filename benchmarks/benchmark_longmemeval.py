"""LongMemEval retrieval (no LLM): session-level recall_all@k, recall_any@k and NDCG@k.

For each question a fresh throwaway store receives the question's haystack: every user turn
(or every turn with --turns all) becomes one memory `[<session date>] <role>: <content>`,
saved session by session in batches of up to 32. The question is recalled with top_k
--turn-depth (default 50); the ranked turns are collapsed to a ranking of their sessions
(first occurrence wins; a turn dedup skipped credits the memory it duplicates) and scored
against `answer_session_ids` at k = 5 and 10, overall and per question_type. Abstention
questions (ids ending in `_abs`) are skipped. Reads the official .json or .json.gz file.

    python benchmarks/benchmark_longmemeval.py --data longmemeval_s.json --limit 100
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
from benchmarks.datasets import (  # noqa: E402
    LmeQuestion,
    deterministic_sample,
    lme_memories,
    load_longmemeval,
)
from benchmarks.metrics import (  # noqa: E402
    Scoreboard,
    collapse,
    mean,
    ndcg_at_k,
    recall_all_at_k,
    recall_any_at_k,
)

UNLIMITED = 10**9
KS = (5, 10)
MODES = {
    "unlimited": "budget large enough that only top_k limits",
    "default-budget": "the default token budget",
}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="TinyContext on LongMemEval retrieval (no LLM): session-level "
        "recall_all@k, recall_any@k and NDCG@k per question_type, one throwaway store per "
        "question.",
    )
    parser.add_argument("--data", type=Path, required=True,
                        help="LongMemEval file in the official format (.json or .json.gz)")
    parser.add_argument("--turns", choices=("user", "all"), default="user",
                        help="which turns become memories (default: user turns)")
    parser.add_argument("--limit", type=int, default=None,
                        help="score a deterministic sample of N questions (see --seed)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the --limit sample")
    parser.add_argument("--turn-depth", type=int, default=50,
                        help="turns recalled per question before collapsing to sessions")
    add_common_arguments(parser)
    args = parser.parse_args(argv)
    if not args.data.is_file():
        parser.error(f"LongMemEval data not found at {args.data}")
    return args


def ingest(service: Any, question: LmeQuestion, turns: str) -> tuple[dict[str, set[str]], int]:
    """Save the haystack; memory id -> sessions it stands for, and the skipped count."""
    covers: dict[str, set[str]] = {}
    by_ref: dict[str, str] = {}
    skipped = 0
    items = lme_memories(question, turns)
    for start in range(0, len(items), 32):
        chunk = items[start : start + 32]
        result = service.save([{"content": text} for _, text in chunk]).to_dict()
        for entry in result["saved"]:
            covers[entry["id"]] = {chunk[entry["index"]][0]}
            by_ref[entry["ref"]] = entry["id"]
        for entry in result.get("skipped_duplicates", []):
            covers[by_ref[entry["duplicate_of"]]].add(chunk[entry["index"]][0])
            skipped += 1
    return covers, skipped


def score_question(ranked_turns: list[list[str]], gold: list[str]) -> dict[str, float]:
    """Session-level metrics for one question from its ranked turn covers."""
    sessions = collapse(ranked_turns)
    out: dict[str, float] = {}
    for k in KS:
        out[f"recall_all@{k}"] = recall_all_at_k(sessions, gold, k)
        out[f"recall_any@{k}"] = recall_any_at_k(sessions, gold, k)
        out[f"ndcg@{k}"] = ndcg_at_k(sessions, gold, k)
    return out


def evaluate(questions: list[LmeQuestion], args: argparse.Namespace,
             progress: Progress) -> dict[str, Any]:
    boards = {mode: Scoreboard() for mode in MODES}
    stats = {"questions": 0, "skipped_no_answer_session": 0, "memories": 0,
             "skipped_duplicates": 0}
    latencies: list[float] = []
    ingest_seconds = 0.0
    for number, question in enumerate(questions, start=1):
        haystack = {s.session_id for s in question.sessions}
        gold = [s for s in question.answer_session_ids if s in haystack]
        if not gold:
            stats["skipped_no_answer_session"] += 1
            continue
        with throwaway_dir("longmemeval") as folder:
            service = make_service(folder / "memories.db", args.model, **settings(args))
            started = time.perf_counter()
            covers, skipped = ingest(service, question, args.turns)
            ingest_seconds += time.perf_counter() - started
            stats["memories"] += len(covers)
            stats["skipped_duplicates"] += skipped
            stats["questions"] += 1
            groups = ["overall", question.question_type]
            if covers:
                started = time.perf_counter()
                full = service.recall(question.question, None, UNLIMITED,
                                      args.turn_depth).to_dict()
                latencies.append(time.perf_counter() - started)
                cut = service.recall(question.question, None, None, args.turn_depth).to_dict()
                answers = {"unlimited": full, "default-budget": cut}
            else:
                answers = {mode: {"memories": []} for mode in MODES}
            for mode, answer in answers.items():
                ranked = [sorted(covers[m["id"]]) for m in answer["memories"]]
                boards[mode].add(groups, score_question(ranked, gold))
            service.close()
        progress.tick(f"{number}/{len(questions)} questions")
    results: dict[str, Any] = {"stats": stats, "modes": {}}
    for mode, board in boards.items():
        order = ["overall"] + sorted(g for g in board.groups() if g != "overall")
        results["modes"][mode] = {g: {"n": board.count(g), **board.means(g)} for g in order}
    results["ingest_seconds"] = ingest_seconds
    results["recall_ms_mean"] = 1000 * mean(latencies)
    return results


def run(args: argparse.Namespace) -> dict[str, Any]:
    progress = Progress("longmemeval", args.quiet)
    loaded = load_longmemeval(args.data)
    scorable = [q for q in loaded if not q.abstention]
    chosen = deterministic_sample(scorable, args.limit, args.seed)
    progress(f"{len(loaded)} questions, {len(loaded) - len(scorable)} abstention skipped, "
             f"scoring {len(chosen)}")
    results = evaluate(chosen, args, progress)
    results["stats"]["abstention_skipped"] = len(loaded) - len(scorable)
    return results


def report(results: dict[str, Any], args: argparse.Namespace) -> None:
    s = results["stats"]
    print(f"TinyContext on LongMemEval ({args.data.name}), model {args.model}, {args.turns} "
          f"turns, top_k {args.turn_depth} turns collapsed to sessions")
    print(f"Machine: {machine_line(machine_info())}")
    print(f"{s['questions']} questions scored ({s['abstention_skipped']} abstention skipped, "
          f"{s['skipped_no_answer_session']} without an answer session in the haystack); "
          f"{s['memories']:,} memories, {s['skipped_duplicates']} turns skipped as duplicates")
    headers = ["question_type", "n", *[f"{m}@{k}" for k in KS
                                       for m in ("recall_all", "recall_any", "ndcg")]]
    for mode, groups in results["modes"].items():
        rows = [
            [group, g["n"], *[pct(g[f"{m}@{k}"]) for k in KS
                              for m in ("recall_all", "recall_any", "ndcg")]]
            for group, g in groups.items()
        ]
        print_table(headers, rows, f"{mode}: {MODES[mode]} (percent)")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    results = run(args)
    report(results, args)
    write_json(args.json_out, "longmemeval", args, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
