"""Tokens a recall returns at the default budget vs resending every stored memory each turn.

The baseline is the cheapest possible "no memory layer" prompt: every stored memory's text
joined by newlines, no framing. The recall side is counted as TinyContext counts it: the
`total_tokens` of the response, which includes the per-memory `<memory ...>` tag of the
rendered text. Both use the engine's token counter (o200k_base by default).

    python benchmarks/benchmark_token_savings.py
    python benchmarks/benchmark_token_savings.py --sizes 100,1000 --price-per-million 0.15
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
from benchmarks.metrics import mean  # noqa: E402
from benchmarks.synthetic import memory_texts, questions, take  # noqa: E402

DEFAULT_SIZES = "100,1000,10000"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="TinyContext token savings: tokens returned by recall (default budget) vs "
        "resending every stored memory, and the cost difference, on a throwaway store.",
    )
    parser.add_argument(
        "--sizes", type=parse_sizes, default=parse_sizes(DEFAULT_SIZES),
        help=f"store sizes, comma separated (default {DEFAULT_SIZES})",
    )
    parser.add_argument("--queries", type=int, default=50, help="recalls per store size")
    parser.add_argument(
        "--price-per-million", type=float, default=3.00,
        help="USD per million input tokens used for the cost columns (default 3.00)",
    )
    parser.add_argument("--top-k", type=int, default=None, help="recall top_k (default: engine's)")
    parser.add_argument(
        "--max-tokens", type=int, default=None, help="recall budget (default: engine's, 2000)"
    )
    parser.add_argument("--seed", type=int, default=7, help="seed of the synthetic memories")
    add_common_arguments(parser)
    return parser.parse_args(argv)


def run(args: argparse.Namespace) -> dict[str, Any]:
    progress = Progress("tokens", args.quiet)
    stream = memory_texts(args.seed)
    asks = questions(args.queries, seed=args.seed + 1)
    rows: list[dict[str, Any]] = []
    with throwaway_dir("tokens") as folder:
        service = make_service(folder / "memories.db", args.model, **settings(args))
        budget = args.max_tokens or service.config.recall_max_tokens
        top_k = args.top_k or service.config.recall_top_k
        texts: list[str] = []
        for size in args.sizes:
            new = take(stream, size - len(texts))
            for chunk in batched(new, 32):
                result = service.save([{"content": t} for t in chunk]).to_dict()
                skipped = {s["index"] for s in result.get("skipped_duplicates", [])}
                texts.extend(t for i, t in enumerate(chunk) if i not in skipped)
                progress.tick(f"saved {len(texts):,}/{size:,}")
            resend = service.tokenizer.count("\n".join(texts))
            progress(f"{len(texts):,} memories: {resend:,} tokens to resend; recalling")
            tokens, returned, truncated = [], [], 0
            for q in asks:
                answer = service.recall(q, max_tokens=args.max_tokens, top_k=args.top_k).to_dict()
                tokens.append(answer["total_tokens"])
                returned.append(len(answer["memories"]))
                truncated += bool(answer["truncated"])
            recall_tokens = mean(tokens)
            price = args.price_per_million / 1_000_000
            rows.append(
                {
                    "memories": len(texts),
                    "resend_all_tokens": resend,
                    "recall_tokens_mean": recall_tokens,
                    "recall_tokens_max": max(tokens),
                    "memories_returned_mean": mean(returned),
                    "truncated_share": truncated / len(asks),
                    "tokens_saved_share": 1 - recall_tokens / resend if resend else 0.0,
                    "reduction_factor": resend / recall_tokens if recall_tokens else None,
                    "cost_per_1k_queries_resend_usd": resend * price * 1000,
                    "cost_per_1k_queries_recall_usd": recall_tokens * price * 1000,
                    "saving_per_1k_queries_usd": (resend - recall_tokens) * price * 1000,
                }
            )
        service.close()
    return {"rows": rows, "budget": budget, "top_k": top_k}


def report(results: dict[str, Any], args: argparse.Namespace) -> None:
    print(
        f"TinyContext token savings, model {args.model}: recall top_k {results['top_k']}, "
        f"budget {results['budget']} tokens, {args.queries} questions per size, "
        f"${args.price_per_million:.2f} per million input tokens"
    )
    print(f"Machine: {machine_line(machine_info())}")
    print_table(
        ["memories", "resend-all tokens", "recall tokens (mean)", "recall tokens (max)",
         "memories returned", "tokens saved", "x fewer", "$ / 1k queries resend",
         "$ / 1k queries recall", "$ saved / 1k queries"],
        [
            [
                r["memories"], r["resend_all_tokens"], r["recall_tokens_mean"],
                r["recall_tokens_max"], r["memories_returned_mean"],
                f"{100 * r['tokens_saved_share']:.1f}%", r["reduction_factor"],
                r["cost_per_1k_queries_resend_usd"], r["cost_per_1k_queries_recall_usd"],
                r["saving_per_1k_queries_usd"],
            ]
            for r in results["rows"]
        ],
        "Tokens per question: recall vs resending the whole store",
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    results = run(args)
    report(results, args)
    write_json(args.json_out, "token_savings", args, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
