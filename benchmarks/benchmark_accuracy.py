"""Planted-fact accuracy: facts recalled by paraphrased questions inside growing filler.

Two variants, each in its own throwaway store:
  plain  40 hand-written facts about a user and their project ("The user is allergic to
         peanuts ..."), each asked the way the user would ask later ("Is there any food I
         must stay away from?"), with few shared key words;
  hard   every person has every attribute, so each fact has confusable near-duplicates: the
         same person's other attributes and the same attribute of every other person; three
         attributes (city, job, car) are saved with an old value and then replaced through
         update_memory - the superseded version must never be returned.
Filler is synthetic agent memories (benchmarks/synthetic.py) with disjoint names, added until
each filler size is reached; every question is asked at every size with the default recall
(top_k 10, default token budget). Everything is generated from --seed.

    python benchmarks/benchmark_accuracy.py
    python benchmarks/benchmark_accuracy.py --filler 0,1000 --variants hard
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import (  # noqa: E402
    Progress,
    add_common_arguments,
    batched,
    machine_info,
    machine_line,
    make_service,
    parse_sizes,
    print_table,
    settings,
    throwaway_dir,
    write_json,
)
from benchmarks.facts import BY_KEY, Fact, hard_facts, plain_facts  # noqa: E402
from benchmarks.metrics import Scoreboard, hit_at_k, reciprocal_rank  # noqa: E402
from benchmarks.synthetic import memory_texts, take  # noqa: E402

KS = (1, 5, 10)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="TinyContext planted-fact accuracy (plain and confusable near-duplicates "
        "with superseded values), recall@k and MRR inside growing filler, throwaway stores.",
    )
    parser.add_argument("--filler", type=parse_sizes, default=parse_sizes("0,1000,10000"),
                        help="filler sizes, comma separated (default 0,1000,10000)")
    parser.add_argument("--plain-facts", type=int, default=None,
                        help="use only the first N of the 40 plain facts")
    parser.add_argument("--hard-people", type=int, default=12,
                        help="people in the hard variant (x 10 attributes = facts)")
    parser.add_argument("--variants", default="plain,hard", help="plain, hard or both")
    parser.add_argument("--seed", type=int, default=3, help="seed of facts and filler")
    add_common_arguments(parser)
    return parser.parse_args(argv)


def plant(service: Any, facts: list[Fact]) -> tuple[dict[str, int], set[str], int]:
    """Save the facts (old versions first, then update_memory); returns current id -> fact
    index, the superseded ids, and how many facts dedup skipped (should be 0)."""
    current: dict[str, int] = {}
    superseded: set[str] = set()
    skipped = 0
    first = [f.old_text or f.text for f in facts]
    for start in range(0, len(first), 32):
        result = service.save([{"content": t} for t in first[start : start + 32]]).to_dict()
        skipped += len(result.get("skipped_duplicates", []))
        for entry in result["saved"]:
            current[entry["id"]] = start + entry["index"]
    for memory_id, index in list(current.items()):
        if facts[index].old_text is not None:
            updated = service.update(memory_id, facts[index].text).to_dict()
            del current[memory_id]
            superseded.add(memory_id)
            current[updated["id"]] = index
    return current, superseded, skipped


def retrievers_alone(service: Any, question: str) -> dict[str, list[str]]:
    """Ablation: the ids each retriever hands to the fusion for the default recall, in its
    own order (same candidate pool as recall uses)."""
    from tinycontext.testing.retrievers import retrievers_alone

    found = retrievers_alone(service, question)
    return {"dense": [h.memory.id for h in found.dense],
            "bm25": [h.memory.id for h in found.keyword]}


def ask(service: Any, facts: list[Fact], current: dict[str, int], superseded: set[str],
        board: Scoreboard, label: str) -> dict[str, int]:
    """Every question once; scores into `board` under `label`; counts top-1 confusions."""
    target_id = {index: memory_id for memory_id, index in current.items()}
    confusion = {"same_person": 0, "same_attribute": 0, "other_fact": 0, "filler_memory": 0,
                 "superseded_returned": 0}
    has_updates = any(f.old_text for f in facts)
    for index, fact in enumerate(facts):
        answer = service.recall(fact.question).to_dict()
        ids = [m["id"] for m in answer["memories"]]
        ranked = [[i] for i in ids]
        gold = [target_id[index]]
        scores = {f"recall@{k}": hit_at_k(ranked, gold, k) for k in KS}
        scores["mrr"] = reciprocal_rank(ranked, gold)
        for name, hits in retrievers_alone(service, fact.question).items():
            alone = [[h] for h in hits[:10]]
            scores[f"{name}_recall@10"] = hit_at_k(alone, gold, 10)
            scores[f"{name}_mrr"] = reciprocal_rank(alone, gold)
        groups = [label]
        if has_updates:
            groups.append(f"{label} / {'updated' if fact.old_text else 'stable'}")
        board.add(groups, scores)
        confusion["superseded_returned"] += sum(1 for i in ids if i in superseded)
        if ids and ids[0] != gold[0]:
            other = current.get(ids[0])
            if other is None:
                confusion["filler_memory"] += 1
            elif facts[other].person == fact.person:
                confusion["same_person"] += 1
            elif facts[other].attribute == fact.attribute:
                confusion["same_attribute"] += 1
            else:
                confusion["other_fact"] += 1
    return confusion


def run_variant(name: str, facts: list[Fact], args: argparse.Namespace,
                progress: Progress) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    stream = memory_texts(args.seed + 100)
    with throwaway_dir(f"accuracy-{name}") as folder:
        service = make_service(folder / "memories.db", args.model, **settings(args))
        current, superseded, skipped = plant(service, facts)
        progress(f"{name}: planted {len(current)} facts ({len(superseded)} updated, "
                 f"{skipped} skipped as duplicates)")
        filler = 0
        for size in args.filler:
            for chunk in batched(take(stream, size - filler), 32):
                service.save([{"content": t} for t in chunk])
                filler += len(chunk)
                progress.tick(f"{name}: filler {filler:,}/{size:,}")
            board = Scoreboard()
            confusion = ask(service, facts, current, superseded, board, name)
            for group in board.groups():
                rows.append({"variant": group, "filler": size, "questions": board.count(group),
                             **board.means(group),
                             **(confusion if group == name else {})})
            top = board.means(name)
            progress(f"{name}: filler {size:,}: recall@1 {top['recall@1']:.3f}, "
                     f"recall@10 {top['recall@10']:.3f}, MRR {top['mrr']:.3f}")
        service.close()
    return rows


def run(args: argparse.Namespace) -> dict[str, Any]:
    progress = Progress("accuracy", args.quiet)
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    rows: list[dict[str, Any]] = []
    for variant in variants:
        if variant == "plain":
            facts = plain_facts(args.plain_facts)
        elif variant == "hard":
            facts = hard_facts(args.hard_people, args.seed)
        else:
            raise SystemExit(f"unknown variant {variant!r}: use plain and/or hard")
        rows.extend(run_variant(variant, facts, args, progress))
    examples = {
        key: {"statement": a.statement, "questions": list(a.questions), "update": a.update}
        for key, a in BY_KEY.items()
    }
    return {"rows": rows, "attributes": examples}


def report(results: dict[str, Any], args: argparse.Namespace) -> None:
    print(f"TinyContext planted-fact accuracy, model {args.model}, default recall (top_k 10)")
    print(f"Machine: {machine_line(machine_info())}")
    print_table(
        ["variant", "filler", "questions", "recall@1", "recall@5", "recall@10", "MRR",
         "wrong top-1: same person", "same attribute", "other fact", "filler memory",
         "superseded returned"],
        [
            [r["variant"], r["filler"], r["questions"], r["recall@1"], r["recall@5"],
             r["recall@10"], r["mrr"], r.get("same_person"), r.get("same_attribute"),
             r.get("other_fact"), r.get("filler_memory"), r.get("superseded_returned")]
            for r in results["rows"]
        ],
        "Planted facts (one relevant memory per question, so recall@k = hit@k)",
    )
    print_table(
        ["variant", "filler", "hybrid recall@10", "dense-only recall@10", "BM25-only recall@10",
         "hybrid MRR", "dense-only MRR", "BM25-only MRR"],
        [
            [r["variant"], r["filler"], r["recall@10"], r["dense_recall@10"],
             r["bm25_recall@10"], r["mrr"], r["dense_mrr"], r["bm25_mrr"]]
            for r in results["rows"]
        ],
        "Ablation: each retriever alone (its own top 10 from the pool recall fuses)",
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    results = run(args)
    report(results, args)
    write_json(args.json_out, "accuracy", args, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
