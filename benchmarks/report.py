"""Write docs/benchmarks.md and its plots from the JSON the benchmark scripts wrote.

    python benchmarks/report.py                  # docs/results/*.json -> docs/benchmarks.md
    python benchmarks/report.py --check          # exit 1 when docs/benchmarks.md is stale

The report holds current results only: each section names the run it comes from (command,
revision, date, load average). To refresh a figure, re-run its benchmark with
`--json-out docs/results/<name>.json` and run this script again. Needs the `docs` extra
(matplotlib) for the plots. Hand-written notes on a run (docs/results/<name>.md) follow its
section up to their `## Lab notes` heading: how the figures were reached and what was tried
besides stay in the note, which the report links to.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS, IMAGES = ROOT / "docs" / "results", ROOT / "docs" / "img"
OUT = ROOT / "docs" / "benchmarks.md"
CATEGORIES = ["1 multi-hop", "2 temporal", "3 open-domain", "4 single-hop", "5 adversarial"]
# In a note beside the results, the heading its experiment log starts at.
LAB_NOTES = re.compile(r"^## Lab notes[ \t]*$", re.M)
HALVES = ["overall (1-4)", "tune 1-5: overall (1-4)", "check 6-10: overall (1-4)", "all (1-5)"]


def table(headers: list[str], rows: Iterable[list[Any]]) -> str:
    def cell(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:,.1f}" if abs(v) >= 10 else f"{v:.2f}"
        return f"{v:,}" if isinstance(v, int) else str(v)

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def provenance(run: dict[str, Any]) -> str:
    m = run["machine"]
    load = m.get("load_average_1_5_15") or ["?"]
    words = run["command"].split()
    if "--json-out" in words:  # where that run kept its JSON is no part of the method
        at = words.index("--json-out")
        del words[at:at + 2]
    # The data and scratch folders were that machine's: a reader puts their own there.
    words = [f"path/to/{Path(w).name}" if w.startswith("/") else w for w in words]
    return (f"Run: `python benchmarks/{' '.join(words)}` at revision {m['git_revision']}, "
            f"{run['created'][:10]}, {m['cores']} cores ({m['cpu']}), Python {m['python']}, "
            f"load average {load[0]} at the start.")


def pct(x: float) -> float:
    return round(100 * x, 1)


def locomo(runs: dict[str, dict[str, Any]], plot: Callable[..., str]) -> str:
    out = ["## LoCoMo: turn retrieval (no LLM)", "",
           "Each dialog turn is one memory, each conversation one session; recall@k is the share "
           "of a question's evidence turns in the top k (percent). Conversations 1-5 are the half "
           "the ranking was tuned on, 6-10 the half held back. Two shapes of memory text: "
           "`dated` (`[<session date>] <speaker>: <text>`) and `plain` (the turn's text only)."]
    for shape, name in (("dated", "locomo"), ("plain", "locomo-plain")):
        run = runs.get(name)
        if run is None:
            continue
        modes = run["results"]["modes"]
        out += ["", f"### {shape.capitalize()} memory text", "", provenance(run), ""]
        rows = []
        for mode in ("hybrid", "dense-only", "bm25-only"):
            if mode not in modes:
                continue
            for group in HALVES:
                g = modes[mode][group]
                rows.append([mode, group, g["n"], pct(g["recall@5"]), pct(g["recall@10"]),
                             pct(g["recall@25"]), round(g["mrr"], 2)])
        out.append(table(["retriever", "questions", "n", "R@5", "R@10", "R@25", "MRR"], rows))
        out += ["", table(["category", "n", "R@5", "R@10", "R@25"],
                          [[c, modes["hybrid"][c]["n"], pct(modes["hybrid"][c]["recall@5"]),
                            pct(modes["hybrid"][c]["recall@10"]),
                            pct(modes["hybrid"][c]["recall@25"])] for c in CATEGORIES])]
    dated = runs.get("locomo")
    if dated is not None:
        modes = dated["results"]["modes"]
        series = {m: [pct(modes[m][c]["recall@10"]) for c in CATEGORIES]
                  for m in ("hybrid", "dense-only", "bm25-only") if m in modes}
        image = plot("locomo", "LoCoMo recall@10 by question category (dated text)",
                     [c.split(" ", 1)[1] for c in CATEGORIES], series, "recall@10 (%)")
        out += ["", f"![LoCoMo recall@10 by category]({image})"]
    return "\n".join(out)


def speed(runs: dict[str, dict[str, Any]], plot: Callable[..., str]) -> str:
    run = runs["speed"]
    points = run["results"]["checkpoints"]
    rows = [[p["stored"], round(p["write_per_s"]), p["recall_ms"]["p50"], p["recall_ms"]["p95"],
             p["dense_recall_at_10_vs_exact"]] for p in points]
    sizes = [f"{p['stored']:,}" for p in points]
    image = plot("speed", "Recall latency by store size", sizes,
                 {"p50": [p["recall_ms"]["p50"] for p in points],
                  "p95": [p["recall_ms"]["p95"] for p in points]}, "ms")
    cold = run["results"]["cold_start"]
    return "\n".join([
        "## Speed: writes and recall by store size", "", provenance(run), "",
        "Saves in batches of 32, then recalls with the query embedding included; dense recall@10 "
        "compares the store's vector search with an exact brute-force cosine.", "",
        table(["memories", "writes/s", "recall p50 ms", "recall p95 ms",
               "dense recall@10 vs exact"], rows), "",
        f"A fresh process answered its first recall {cold['spawn_to_answer_s']:.1f} s after "
        f"spawn and peaked at {cold['peak_rss_mb']:.0f} MB RSS.", "",
        f"![Recall latency by store size]({image})"])


def token_savings(runs: dict[str, dict[str, Any]], plot: Callable[..., str]) -> str:
    run = runs["token_savings"]
    res = run["results"]
    rows = [[r["memories"], r["resend_all_tokens"], round(r["recall_tokens_mean"]),
             pct(r["tokens_saved_share"])] for r in res["rows"]]
    return "\n".join([
        "## Token savings: a recall against resending every memory", "", provenance(run), "",
        f"Recall at the default budget ({res['budget']} tokens, top_k {res['top_k']}).", "",
        table(["memories", "resend-all tokens", "recall tokens (mean)", "saved %"], rows)])


TITLES = {"filters": "Filtered recall: tags, time windows, as of",
          "filters-pg": "Filtered recall on PostgreSQL",
          "hooks": "Agent hooks: what a prompt gets, how long a hook takes",
          "encryption": "Encryption at rest", "import": "Importing other tools' exports",
          "handshake": "MCP stdio handshake: spawn to the tools list",
          "recall-levers": "Recall levers: settings off by default"}


def hooks(runs: dict[str, dict[str, Any]], plot: Callable[..., str]) -> str:
    run = runs["hooks"]
    rel, speed_ = run["results"]["relevance"], run["results"]["speed"]
    rows = [[floor, pct(f["locomo"]["evidence_share"]), round(f["locomo"]["mean_tokens"]),
             pct(f["coding"]["injected_share"]), round(f["coding"]["mean_tokens"], 1)]
            for floor, f in sorted(rel["floors"].items())]
    return "\n".join([
        "## " + TITLES["hooks"], "", provenance(run), "",
        f"A prompt hook at a budget of {rel['budget']} tokens over {rel['memories']:,} "
        "memories (LoCoMo conversations 1-5, their questions as prompts) and over ordinary "
        "coding prompts that the store knows nothing about.", "",
        table(["relevance floor", "LoCoMo: evidence in the block %", "LoCoMo: mean tokens",
               "coding: anything injected %", "coding: mean tokens"], rows), "",
        table(["store", "warm p50 ms", "warm p95 ms", "cold p50 ms", "cold calls that gave up"],
              [[speed_["memories"], speed_["warm_p50_ms"], speed_["warm_p95_ms"],
                speed_["cold_p50_ms"], f"{speed_['cold_gave_up']}/{speed_['cold_calls']}"]])])


def _filter_cases(res: dict[str, Any]) -> str:
    """benchmark_filters.py's cases, each p95 against the unfiltered one."""
    base = res["cases"][0]["p95_ms"]
    rows = [[c["case"], c["p50_ms"], c["p95_ms"], f"{c['p95_ms'] / base:.2f}x",
             f"{c['dense_recall_at_10']:.3f}"] for c in res["cases"]]
    return table(["case", "recall p50 ms", "recall p95 ms", "p95 / unfiltered",
                  "dense recall@10"], rows)


def filters(runs: dict[str, dict[str, Any]], plot: Callable[..., str]) -> str:
    run = runs["filters"]
    res = run["results"]
    built = res["build"]
    return "\n".join([
        "## " + TITLES["filters"], "", provenance(run), "",
        f"One SQLite store of {built['size']:,} memories and {built['rows'] - built['size']:,} "
        f"replaced versions ({pct(built['versioned']):.0f}% of the memories have 1-5 older "
        "versions); recall through the service, query embedding included. Dense recall@10 "
        "compares the filtered vector search with brute force over every vector that passes "
        "the filter.", "", _filter_cases(res)])


def filters_pg(runs: dict[str, dict[str, Any]], plot: Callable[..., str]) -> str:
    """The same cases on PostgreSQL (benchmark_filters.py --postgres)."""
    run = runs["filters-pg"]
    res = run["results"]
    return "\n".join([
        "## " + TITLES["filters-pg"], "", provenance(run), "",
        f"The first {res['memories']:,} memories of that store and their {res['versions']:,} "
        "replaced versions copied into PostgreSQL 16 + pgvector (pgserver, default settings; "
        "the HNSW index built in one go after the load).", "", _filter_cases(res)])


def generic(name: str, run: dict[str, Any]) -> str:
    """A benchmark without its own section: its numeric results, flattened."""
    rows: list[list[Any]] = []

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                walk(f"{prefix}.{key}" if prefix else str(key), inner)
        elif isinstance(value, (int, float)) and not isinstance(value, bool) and len(rows) < 40:
            rows.append([f"`{prefix}`", value])

    walk("", run["results"])
    head = [f"## {TITLES.get(name, name)}", "", provenance(run)]
    return "\n".join([*head, "", table(["result", "value"], rows)] if rows else head)


SECTIONS: dict[str, Callable[[dict[str, dict[str, Any]], Callable[..., str]], str]] = {
    "locomo": locomo, "speed": speed, "token_savings": token_savings, "hooks": hooks,
    "filters": filters, "filters-pg": filters_pg,
}
OWNED = {"locomo": ["locomo", "locomo-plain"], "speed": ["speed"],
         "token_savings": ["token_savings"], "hooks": ["hooks"],
         "filters": ["filters"], "filters-pg": ["filters-pg"]}


def make_plotter(images: Path, out: Path, write_to: Path | None) -> Callable[..., str]:
    """Draws into write_to (None: only returns the link, for --check)."""

    def plot(name: str, title: str, labels: list[str], series: dict[str, list[float]],
             ylabel: str) -> str:
        link = os.path.relpath(images / f"{name}.png", out.parent)
        if write_to is None:
            return link
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7, 3.2), dpi=110)
        width = 0.8 / max(1, len(series))
        for i, (label, values) in enumerate(series.items()):
            xs = [x + (i - (len(series) - 1) / 2) * width for x in range(len(labels))]
            ax.bar(xs, values, width, label=label)
        ax.set_xticks(range(len(labels)), labels)
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=8, frameon=False)
        ax.spines[["top", "right"]].set_visible(False)
        fig.tight_layout()
        write_to.mkdir(parents=True, exist_ok=True)
        # No creation date in the file: the same data gives the same bytes.
        fig.savefig(write_to / f"{name}.png", metadata={"Software": None})
        plt.close(fig)
        return link

    return plot


def report_part(note: Path, out: Path) -> str:
    """A note's text for the report: the part above its `## Lab notes` heading (how the
    figures were reached, levers tried and dropped stay in the note, which the report
    links to), its own title left out and its headings set below the section's own."""
    text = note.read_text(encoding="utf-8")
    current, *lab = LAB_NOTES.split(text, maxsplit=1)
    current = re.sub(r"\A# .*\n", "", current.strip() + "\n").strip()
    current = re.sub(r"^(#{2,5}) ", r"#\1 ", current, flags=re.M)

    def moved(link: str) -> str:  # a link relative to the note, made relative to the report
        return os.path.relpath(note.parent / link, out.parent).replace(os.sep, "/")

    current = re.sub(r"\]\((?![a-z]+:|#|/)([^)\s#]+)",
                     lambda m: "](" + moved(m.group(1)), current)
    if lab:
        link = moved(note.name)
        current += (f"\n\nHow these figures were reached, and what was tried besides: "
                    f"[the lab notes]({link}#lab-notes).")
    return "\n" + current


def render(results: Path, images: Path, out: Path, draw: bool = True) -> str:
    runs = {p.stem: json.loads(p.read_text(encoding="utf-8"))
            for p in sorted(results.glob("*.json"))}
    plot = make_plotter(images, out, images if draw else None)

    def notes(names: Iterable[str]) -> list[str]:
        # Hand-written remarks on a run (how it was measured, what to read into it) sit
        # beside its JSON as <name>.md and follow its section, up to their lab notes.
        found = [results / f"{n}.md" for n in names if (results / f"{n}.md").exists()]
        return [report_part(f, out) for f in found]

    parts = ["# Benchmarks", "",
             "Current results, written by `python benchmarks/report.py` from the JSON in "
             "[docs/results/](results/) (do not edit this page by hand). How to run each "
             "benchmark: [benchmarks/README.md](../benchmarks/README.md). Retrieval figures do "
             "not depend on the machine's load; timings do, so each section gives its load "
             "average."]
    done: set[str] = set()
    for key, section in SECTIONS.items():
        if any(name in runs for name in OWNED[key]):
            parts += ["", section(runs, plot), *notes(OWNED[key])]
        done.update(OWNED[key])
    for name, run in runs.items():
        if name not in done:
            parts += ["", generic(name, run), *notes([name])]
            done.add(name)
    for extra in sorted(results.glob("*.md")):
        if extra.stem not in done:  # remarks on runs kept elsewhere (no JSON here)
            parts += ["", f"## {TITLES.get(extra.stem, extra.stem)}", *notes([extra.stem])]
    return "\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=RESULTS, help="folder of benchmark JSON")
    parser.add_argument("--out", type=Path, default=OUT, help="the Markdown report to write")
    parser.add_argument("--images", type=Path, default=IMAGES, help="folder for the plots")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 when the report differs from the JSON")
    args = parser.parse_args(argv)
    if args.check:
        text = render(args.results, args.images, args.out, draw=False)
        current = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
        if current != text:
            print(f"{args.out} is stale: run python benchmarks/report.py", file=sys.stderr)
            return 1
        return 0
    args.out.write_text(render(args.results, args.images, args.out), encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
