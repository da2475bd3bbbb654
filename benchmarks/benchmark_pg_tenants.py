"""PostgreSQL with many tenants in one table: a tenant's recall latency and dense fidelity.

Layouts (default 1000x1000 and 10x100000: tenants x memories each) are loaded into one
`memories` table per layout (a fresh database each). Texts are 100,000 distinct 15-40 word
conversational texts of benchmarks/realistic.py, shared by the tenants (tenant t starts at
text t x memories-each); vectors are the real model's for the first --real-texts texts and
noisy combinations of two of those for every other row (as benchmark_million.py makes them),
token bits borrowed from a source text. The first batch goes in through `PostgresStore.add`
(which creates the schema); the rest is copied in with the store's own tsvector literals.

The table-wide HNSW index is dropped for the load and not rebuilt (building it over
1,000,000 rows with the store's options takes far longer than the load): no tenant below
half of the table uses it for long. It comes back short for such a tenant (it filters
after its search: ~ef_search x the tenant's share of rows), and the store then searches
exactly. Measured per layout, for --sample tenants:
  - "before": no tenant has an index of its own (what this code did with the table-wide
    index, minus its wasted probes: exact cosine over the tenant's vectors);
  - "after": the store's upkeep has run for every sampled tenant (a tenant with
    TENANT_INDEX_AT vectors gets a partial HNSW index on its key; smaller ones stay exact).
Each: recall through the service (query embedding included) p50/p95, the dense retriever
alone p50/p95, and its recall@10 against exact cosine over that tenant's stored vectors.

    python benchmarks/benchmark_pg_tenants.py --json-out pg_tenants.json
    python benchmarks/benchmark_pg_tenants.py --layouts 100x1000 --sample 5   # quick

With --store-dir the databases are kept there: build them once at low priority
(`nice -n 19 ... --store-dir D --build-only`: load and upkeep, nothing timed), then measure
as often as needed (`... --store-dir D`): a kept layout is measured once, as it is (its
sampled tenants' indexes already built), by a server started by the measuring process.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import (  # noqa: E402
    Progress,
    RecordingEmbedder,
    add_common_arguments,
    machine_info,
    machine_line,
    make_config,
    make_embedder,
    print_table,
    settings,
    throwaway_dir,
    warn_if_busy,
    write_json,
)
from benchmarks._pg_bulk import fresh_database, kept_postgres, load, text_rows  # noqa: E402
from benchmarks.benchmark_million import (  # noqa: E402
    combined_vectors,
    real_documents,
    row_of,
)
from benchmarks.benchmark_pg import start_postgres  # noqa: E402
from benchmarks.benchmark_speed import DEFAULT_DATA  # noqa: E402
from benchmarks.metrics import mean, overlap_at_k, percentile  # noqa: E402

TARGETS = {"recall_p95_ms": 50.0, "dense_recall_at_10": 0.95}


def parse_layout(text: str) -> list[tuple[int, int]]:
    out = []
    for part in text.split(","):
        tenants, _, each = part.strip().lower().partition("x")
        out.append((int(tenants), int(each)))
    return out


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layouts", type=parse_layout,
                        default=parse_layout("1000x1000,10x100000"),
                        help="tenants x memories each, comma separated")
    parser.add_argument("--sample", type=int, default=10, help="tenants measured per layout")
    parser.add_argument("--queries", type=int, default=20, help="timed recalls per tenant")
    parser.add_argument("--warmup", type=int, default=3, help="untimed recalls per tenant")
    parser.add_argument("--real-texts", type=int, default=4000)
    parser.add_argument("--noise", type=float, default=0.35)
    parser.add_argument("--texts", type=int, default=100_000,
                        help="distinct texts prepared (tenants share them; default 100,000)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo file")
    parser.add_argument("--store-dir", type=Path,
                        help="keep the databases here and reuse layouts already loaded")
    parser.add_argument("--build-only", action="store_true",
                        help="with --store-dir: load and upkeep only, measure nothing")
    parser.add_argument("--shared-buffers", metavar="SIZE",
                        help="with --store-dir: the server's shared_buffers, e.g. 2GB "
                        "(default: PostgreSQL's, 128MB)")
    add_common_arguments(parser)
    return parser.parse_args(argv)


def measure(url: str, layout: tuple[int, int], sample: list[int], matrix: Any,
            embedder: Any, queries: list[str], query_vectors: list[bytes],
            args: argparse.Namespace, progress: Progress, label: str) -> dict[str, Any]:
    from tinycontext import build_service
    from tinycontext.adapters.postgres.connection import SharedPgPool
    from tinycontext.adapters.postgres.store import PostgresStore
    from tinycontext.testing.retrievers import pool_size, recall_scope

    _, each = layout
    shared = SharedPgPool(url)
    config = make_config(Path("/nonexistent/unused.db"), args.model, **settings(args))
    recall_ms, dense_ms, overlaps, own = [], [], [], 0
    per_tenant = []
    for n, t in enumerate(sample):
        store = PostgresStore(shared, tenant=f"tenant-{t:05d}")
        service = build_service(config, store=store, embedder=embedder, background=False)
        own += int(store._search.has_own_index(matrix.shape[1]))  # noqa: SLF001 - reporting
        mine = matrix[t * each:(t + 1) * each]
        pool, scope = pool_size(service), recall_scope()
        picked = [(n * 7 + i) % len(queries) for i in range(args.warmup + args.queries)]
        for i in picked[:args.warmup]:
            service.recall(queries[i])
        for i in picked[args.warmup:]:
            started = time.perf_counter()
            service.recall(queries[i])
            recall_ms.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            hits = store.nearest(query_vectors[i], service.model_key, scope, pool)
            dense_ms.append((time.perf_counter() - started) * 1000)
            approx = [row_of(h.memory.id) - t * each for h in hits[:10]]
            overlaps.append(overlap_at_k(mine, len(mine), query_vectors[i], approx, 10))
        service.close()
        mine_ms = recall_ms[-args.queries:]
        per_tenant.append({"tenant": t, "recall_p50_ms": percentile(mine_ms, 50),
                           "recall_p95_ms": percentile(mine_ms, 95),
                           "dense_recall_at_10": mean(overlaps[-args.queries:])})
        progress(f"{label}: tenant {t}: recall p50/p95 {per_tenant[-1]['recall_p50_ms']:.1f}/"
                 f"{per_tenant[-1]['recall_p95_ms']:.1f} ms, dense recall@10 "
                 f"{mean(overlaps[-args.queries:]):.3f}")
    shared.close()
    return {
        "tenants_with_own_index": own,
        "recall_ms": {"p50": percentile(recall_ms, 50), "p95": percentile(recall_ms, 95)},
        "dense_ms": {"p50": percentile(dense_ms, 50), "p95": percentile(dense_ms, 95)},
        "dense_recall_at_10_vs_exact": mean(overlaps),
        "dense_recall_at_10_min": min(overlaps),
        "per_tenant": per_tenant,
    }


def upkeep(url: str, sample: list[int], key: str, progress: Progress) -> list[float]:
    """The store's background upkeep for each sampled tenant; seconds of each step taken."""
    from tinycontext.adapters.postgres.connection import SharedPgPool
    from tinycontext.adapters.postgres.store import PostgresStore

    shared = SharedPgPool(url)
    steps = []
    for t in sample:
        store = PostgresStore(shared, tenant=f"tenant-{t:05d}")
        started = time.perf_counter()
        while store.maintain_index(key):
            steps.append(time.perf_counter() - started)
            progress(f"tenant {t}: own index built in {steps[-1]:.0f} s")
            started = time.perf_counter()
    shared.close()
    return steps


def run(args: argparse.Namespace) -> dict[str, Any]:
    import json

    import numpy as np

    from benchmarks.realistic import RealisticText

    progress = Progress("pg-tenants", args.quiet)
    warn_if_busy(progress)
    kept = args.store_dir
    if kept:
        kept.mkdir(parents=True, exist_ok=True)
    source = RealisticText(args.data)
    texts = source.memory_texts(args.seed)
    queries = source.questions(args.queries + args.warmup + 40, seed=args.seed + 1)
    results: dict[str, Any] = {"layouts": []}
    with throwaway_dir("pg-tenants") as folder:
        embedder = RecordingEmbedder(make_embedder(args.model, folder / "models"))
        embedder.inner.embed(["load the model before timing"])
        largest = max(t * e for t, e in args.layouts)
        names = {layout: f"tc_{layout[0]}x{layout[1]}" for layout in args.layouts}
        marks = {layout: kept / f"{name}.json" for layout, name in names.items()} if kept else {}
        to_load = [layout for layout in args.layouts if not (kept and marks[layout].exists())]
        real_file = kept / f"real_{args.real_texts}_{args.seed}.npy" if kept else None
        if to_load or real_file is None or not real_file.exists():
            key, tokenizer, first, made = real_documents(args, folder, embedder.inner, texts,
                                                         progress)
            real = np.stack([np.frombuffer(v, "<f4") for v, _ in made])
            if real_file is not None:
                np.save(real_file, real)
        else:
            real = np.load(real_file)
        # On a 1e-8 grid, so the rows copied in as text hold exactly these values.
        matrix = (np.rint(combined_vectors(real, largest, args.noise, args.seed) * 1e8)
                  / 1e8).astype(np.float32)
        rows_of_text = text_rows(first, texts, min(largest, args.texts), tokenizer,
                                 progress) if to_load else []
        config = make_config(folder / "unused.db", args.model, **settings(args))
        query_vectors = embedder.inner.embed([config.dense_query_prefix + q for q in queries])
        if kept:
            app_url, server = kept_postgres(kept, args.shared_buffers)
        else:
            app_url, server = start_postgres(folder, None)
        admin = server.get_uri()
        import psycopg

        with psycopg.connect(admin) as conn:
            results["shared_buffers"] = conn.execute("SHOW shared_buffers").fetchone()[0]
        try:
            for layout in args.layouts:
                tenants, each = layout
                name = names[layout]
                step = max(1, tenants // args.sample)
                sample = list(range(0, tenants, step))[:args.sample]
                if layout not in to_load:  # kept: measured as it is (indexes built)
                    url = app_url.replace("/tinycontext_bench?", f"/{name}?")
                    loaded = json.loads(marks[layout].read_text())
                    if args.build_only:
                        continue
                    after = measure(url, layout, sample, matrix, embedder, queries,
                                    query_vectors, args, progress, "kept")
                    results["layouts"].append({
                        "tenants": tenants, "memories_each": each, **loaded,
                        "sampled_tenants": len(sample), "kept": True, "after": after,
                    })
                    continue
                url = fresh_database(admin, app_url, name)
                progress(f"layout {tenants:,} x {each:,}: loading")
                loaded = load(url, admin.replace("/postgres?", f"/{name}?"), layout, matrix,
                              made, rows_of_text, key, tokenizer, progress)
                if args.build_only:
                    loaded["own_index_builds_s"] = upkeep(url, sample, key, progress)
                    marks[layout].write_text(json.dumps(loaded))
                    continue
                before = measure(url, layout, sample, matrix, embedder, queries, query_vectors,
                                 args, progress, "before")
                builds = upkeep(url, sample, key, progress)
                after = measure(url, layout, sample, matrix, embedder, queries, query_vectors,
                                args, progress, "after")
                if kept:
                    marks[layout].write_text(json.dumps({**loaded, "own_index_builds_s": builds}))
                results["layouts"].append({
                    "tenants": tenants, "memories_each": each, **loaded,
                    "sampled_tenants": len(sample), "own_index_builds_s": builds,
                    "before": before, "after": after,
                })
        finally:
            server.cleanup()
    return results


def report(results: dict[str, Any]) -> None:
    rows = []
    for layout in results["layouts"]:
        for phase in ("before", "after"):
            if phase not in layout:
                continue  # a kept layout is measured once, as it is
            r = layout[phase]
            rows.append([
                f"{layout['tenants']:,} x {layout['memories_each']:,}", phase,
                r["tenants_with_own_index"], r["recall_ms"]["p50"], r["recall_ms"]["p95"],
                r["dense_ms"]["p50"], r["dense_ms"]["p95"], r["dense_recall_at_10_vs_exact"],
                r["recall_ms"]["p95"] <= TARGETS["recall_p95_ms"]
                and r["dense_recall_at_10_vs_exact"] >= TARGETS["dense_recall_at_10"],
            ])
    print_table(["layout", "phase", "own indexes", "recall p50", "recall p95", "dense p50",
                 "dense p95", "dense recall@10", "target met"], rows,
                f"PostgreSQL tenants (ms), shared_buffers {results.get('shared_buffers')}, "
                f"{machine_line(machine_info())}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    results = run(args)
    report(results)
    write_json(args.json_out, "pg_tenants", args, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
