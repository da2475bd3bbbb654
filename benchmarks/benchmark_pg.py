"""PostgreSQL + pgvector store vs the SQLite store: recall latency, writes, HNSW fidelity.

Both stores grow through the same checkpoints (default 1,000 and 20,000 memories) with the
same texts and vectors. At each checkpoint, for each store:
  - recall p50/p95 through the service (query embedding with the real model included);
  - the dense retriever alone (p50/p95) and its recall@10 against exact cosine over every
    stored vector (PostgreSQL: HNSW; SQLite: its sign-bit/IVF search);
  - the keyword retriever alone (p50/p95);
  - write throughput: batches of 32 saved through the service (real embedding and dedup
    included), and the store's own insert rate for pre-embedded batches of 32.
After the last checkpoint, updates: as many bulk-loaded memories as a checkpoint saves through
the service each get a new version at the store, one at a time (supersedes per second; on
PostgreSQL the old version leaves the live HNSW index), then the store's upkeep runs to the
end (seconds; on PostgreSQL it moves the replaced versions into their own HNSW index).

Stored vectors are made by the real model (about 12 minutes for 200,000 texts on two cores;
--vector-cache keeps them for the next run). --real-vectors N embeds only the first N and
makes the rest by adding Gaussian noise (--noise) to copies of those: faster, but clusters of
near-copies are harder for HNSW than real text, so recall figures come out pessimistic.
Queries are always embedded by the real model.

PostgreSQL is the pgserver package's server (16 + pgvector 0.6.2) with its default settings
(shared_buffers 128 MB, fsync on), started in a throwaway folder, where the store connects as
an ordinary role that owns its database, so row-level security is in force as in a hosted
deployment. --pg-url runs against a database of your own instead (an empty one: the store
creates schema `tinycontext` there; the URL's role must own it for the VACUUM ANALYZE that
stands in for autovacuum after each bulk load).

    python benchmarks/benchmark_pg.py                      # 1k and 20k
    python benchmarks/benchmark_pg.py --sizes 1k,20k,200k --vector-cache /tmp/tc-vectors
                                                           # adds 200k (about an hour here)
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
    parse_sizes,
    print_table,
    settings,
    throwaway_dir,
    warn_if_busy,
    write_json,
)
from benchmarks.metrics import mean, overlap_at_k, percentile  # noqa: E402
from benchmarks.synthetic import memory_texts, questions, take  # noqa: E402

APP_ROLE = "tinycontext_bench"
DATABASE = "tinycontext_bench"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=parse_sizes, default=parse_sizes("1000,20000"),
                        help="store-size checkpoints, 'k' allowed (default 1k,20k)")
    parser.add_argument("--real-vectors", type=int, default=None,
                        help="stored vectors embedded by the model (default: all); the rest "
                        "are perturbed copies of them, which is faster to make")
    parser.add_argument("--noise", type=float, default=0.5,
                        help="norm of the Gaussian noise added to a copied vector (default 0.5: "
                        "cosine about 0.89 to its source)")
    parser.add_argument("--queries", type=int, default=100, help="timed recalls per checkpoint")
    parser.add_argument("--warmup", type=int, default=10, help="untimed recalls per checkpoint")
    parser.add_argument("--write-batches", type=int, default=10,
                        help="batches of 32 saved through each service per checkpoint")
    parser.add_argument("--pg-url", help="store URL of an empty database with pgvector "
                        "(default: a throwaway pgserver)")
    parser.add_argument("--vector-cache", metavar="PATH",
                        help="keep the real stored vectors in this .npy file between runs "
                        "(reused when it holds enough rows for this seed and model)")
    parser.add_argument("--seed", type=int, default=7)
    add_common_arguments(parser)
    return parser.parse_args(argv)


def start_postgres(folder: Path, url: str | None) -> tuple[str, Any]:
    """(store URL, pgserver handle or None). Without --pg-url: a throwaway server where an
    ordinary role owns a fresh database (so row-level security applies to the store)."""
    if url is not None:
        return url, None
    import pgserver
    import psycopg

    server = pgserver.get_server(folder / "pgdata", cleanup_mode="delete")
    admin = server.get_uri()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {APP_ROLE} LOGIN")
        conn.execute(f"CREATE DATABASE {DATABASE} OWNER {APP_ROLE}")
    with psycopg.connect(admin.replace("/postgres?", f"/{DATABASE}?"), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION vector")
    return admin.replace("postgres:@/postgres?", f"{APP_ROLE}@/{DATABASE}?"), server


def stored_vectors(embedder: Any, texts: list[str], real: int, noise: float, seed: int,
                   progress: Progress, cache: str | None = None) -> Any:
    """Real embeddings for the first `real` texts, perturbed copies of them for the rest."""
    import numpy as np

    dims = embedder.dimensions
    out = np.zeros((len(texts), dims), dtype=np.float32)
    count = min(real, len(texts))
    done = 0
    cache_path = Path(cache).with_suffix(f".{seed}.{embedder.model_key.replace(':', '-')}.npy") \
        if cache else None
    if cache_path is not None and cache_path.exists():
        cached = np.load(cache_path)
        done = min(len(cached), count)
        out[:done] = cached[:done]
        progress(f"{done:,} stored vectors from {cache_path}")
    for start in range(done, count, 64):
        batch = embedder.embed(texts[start:min(start + 64, count)])
        block = np.frombuffer(b"".join(batch), dtype="<f4").reshape(-1, dims)
        out[start:start + len(batch)] = block
        progress.tick(f"embedded {start + len(batch):,}/{count:,} stored texts")
    if cache_path is not None and count > done:
        np.save(cache_path, out[:count])
    if len(texts) > count:
        rng = np.random.default_rng(seed)
        source = rng.integers(0, count, size=len(texts) - count)
        jitter = rng.standard_normal((len(texts) - count, dims)).astype(np.float32)
        jitter *= noise / np.sqrt(dims)
        copies = out[source] + jitter
        out[count:] = copies / np.linalg.norm(copies, axis=1, keepdims=True)
    return out


def memories(texts: list[str], vectors: Any, first: int, key: str, tokenizer: Any) -> list[Any]:
    from tinycontext.testing.bulk import bulk_id, prepared

    out = []
    for offset, (text, vector) in enumerate(zip(texts, vectors, strict=True)):
        n = first + offset
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1_700_000_000 + n * 60))
        out.append(prepared(bulk_id(n), text, created_at=stamp,
                            vector=vector.astype("<f4").tobytes(), model_key=key,
                            content_tokens=tokenizer.count(text)))
    return out


def settle(name: str, store: Any, key: str, url: str) -> None:
    """What a running deployment has done by itself before queries arrive."""
    if name == "sqlite":
        while store.maintain_index(key):  # IVF training, as the background job does
            pass
        return
    import psycopg  # autovacuum's ANALYZE after a bulk load, without waiting for it

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE tinycontext.memories")
        conn.execute("VACUUM ANALYZE tinycontext.memory_terms")


def timed(fn: Any, *args: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    result = fn(*args)
    return (time.perf_counter() - started) * 1000, result


def run(args: argparse.Namespace) -> dict[str, Any]:
    import numpy as np

    from tinycontext import build_service
    from tinycontext.testing.retrievers import keyword_groups, pool_size, recall_scope

    progress = Progress("pg", args.quiet)
    warn_if_busy(progress)
    largest = max(args.sizes)
    write_count = 32 * args.write_batches
    stream = memory_texts(args.seed)
    texts = take(stream, largest)
    extra = take(stream, 2 * write_count * len(args.sizes))  # service writes, store-only adds
    queries = questions(args.queries + args.warmup, seed=args.seed + 1)
    results: dict[str, Any] = {"checkpoints": []}
    with throwaway_dir("pg") as folder:
        recorder = RecordingEmbedder(make_embedder(args.model, folder / "models"))
        recorder.inner.embed(["load the model before timing"])
        real = largest if args.real_vectors is None else args.real_vectors
        progress(f"embedding up to {real:,} stored texts with the real model")
        matrix = stored_vectors(recorder.inner, texts, real, args.noise, args.seed, progress,
                                args.vector_cache)
        # Where each stored memory's vector is: ("bulk", n) is matrix row n, ("extra", j) is
        # extra_rows[j]; exact search runs over matrix[:stored] followed by extra_rows.
        where: dict[str, tuple[str, int]] = {}
        extra_rows: list[Any] = []
        app_url, server = start_postgres(folder, args.pg_url)
        # Each service opens its own store (the config's), searched alone below as well.
        configs = {"sqlite": make_config(folder / "memories.db", args.model, **settings(args)),
                   "postgres": make_config(folder / "unused.db", args.model, store_url=app_url,
                                           **settings(args))}
        services = {name: build_service(config, embedder=recorder, background=False)
                    for name, config in configs.items()}
        stores = {name: service.store for name, service in services.items()}
        key = services["sqlite"].model_key
        tokenizer = services["sqlite"].tokenizer
        query_vectors = recorder.inner.embed(queries)
        pool, scope = pool_size(services["sqlite"]), recall_scope()
        stored = used_extra = 0
        for size in args.sizes:
            batch = memories(texts[stored:size], matrix[stored:size], stored, key, tokenizer)
            for offset, item in enumerate(batch):
                where[item.memory.id] = ("bulk", stored + offset)
            stats: dict[str, dict[str, Any]] = {name: {} for name in stores}
            for name, store in stores.items():
                started = time.perf_counter()
                for start in range(0, len(batch), 500):
                    store.add(batch[start:start + 500])
                    progress.tick(f"{name}: loaded {stored + start + 500:,}/{size:,}")
                stats[name]["bulk_load_per_s"] = len(batch) / (time.perf_counter() - started)
                settle(name, store, key, app_url)
            stored = size
            # Writes through the service: the same texts into both stores, 32 per call.
            segment = extra[used_extra:used_extra + write_count]
            row_of_text: dict[str, int] = {}
            for name, service in services.items():
                started = time.perf_counter()
                for start in range(0, write_count, 32):
                    texts_now = segment[start:start + 32]
                    saved = service.save([{"content": t} for t in texts_now]).to_dict()
                    for entry in saved["saved"]:
                        text = texts_now[entry["index"]]
                        if text not in row_of_text:
                            row_of_text[text] = len(extra_rows)
                            extra_rows.append(np.frombuffer(recorder.last[entry["index"]], "<f4"))
                        where[entry["id"]] = ("extra", row_of_text[text])
                stats[name]["service_write_per_s"] = write_count / (time.perf_counter() - started)
            # The store alone: pre-embedded batches of 32 (vectors of earlier texts).
            plain = extra[used_extra + write_count:used_extra + 2 * write_count]
            adds = memories(plain, matrix[:write_count], 10_000_000 + used_extra, key, tokenizer)
            for item, vector in zip(adds, matrix[:write_count], strict=True):
                where[item.memory.id] = ("extra", len(extra_rows))
                extra_rows.append(vector)
            for name, store in stores.items():
                started = time.perf_counter()
                for start in range(0, write_count, 32):
                    store.add(adds[start:start + 32])
                stats[name]["store_add_per_s"] = write_count / (time.perf_counter() - started)
                settle(name, store, key, app_url)
            used_extra += 2 * write_count
            everything = np.concatenate([matrix[:stored], np.stack(extra_rows)])

            def row_of(memory_id: str) -> int:
                part, n = where[memory_id]
                return n if part == "bulk" else stored + n  # noqa: B023 - used in this loop only
            row: dict[str, Any] = {"size": size}
            for name, service in services.items():
                store = stores[name]
                for q in queries[:args.warmup]:
                    service.recall(q)
                recall_ms, dense_ms, keyword_ms, overlaps = [], [], [], []
                for q, vector in zip(queries[args.warmup:], query_vectors[args.warmup:],
                                     strict=True):
                    recall_ms.append(timed(service.recall, q)[0])
                    took, hits = timed(store.nearest, vector, key, scope, pool)
                    dense_ms.append(took)
                    approx = [row_of(h.memory.id) for h in hits[:10]]
                    overlaps.append(overlap_at_k(everything, len(everything), vector, approx, 10))
                    groups = keyword_groups(q)
                    keyword_ms.append(timed(store.keyword_search, groups, scope, pool)[0])
                row[name] = {
                    **stats[name],
                    "recall_ms": {"p50": percentile(recall_ms, 50),
                                  "p95": percentile(recall_ms, 95)},
                    "dense_ms": {"p50": percentile(dense_ms, 50), "p95": percentile(dense_ms, 95)},
                    "keyword_ms": {"p50": percentile(keyword_ms, 50),
                                   "p95": percentile(keyword_ms, 95)},
                    "dense_recall_at_10_vs_exact": mean(overlaps),
                    "memories": len(everything),
                }
                progress(f"{size:,} {name}: recall p95 {row[name]['recall_ms']['p95']:.1f} ms, "
                         f"dense recall@10 {row[name]['dense_recall_at_10_vs_exact']:.3f}")
            results["checkpoints"].append(row)
        results["store_supersede_per_s"], results["store_upkeep_after_updates_s"] = supersedes(
            stores, stored, write_count, texts, matrix, key, tokenizer)
        for service in services.values():
            service.close()
        results["postgres_bytes"] = _database_bytes(app_url)
        results["sqlite_bytes"] = sum(p.stat().st_size for p in folder.glob("memories.db*"))
        if server is not None:
            server.cleanup()
    return results


def supersedes(stores: dict[str, Any], stored: int, count: int, texts: list[str], matrix: Any,
               key: str, tokenizer: Any) -> tuple[dict[str, float], dict[str, float]]:
    """Updates at the store, after the last checkpoint (the recall checks expect no replaced
    versions): `count` of the bulk-loaded memories each get a new version, pre-embedded (a
    vector of another memory), one at a time. The old version leaves the live HNSW index.
    Then (timed apart) the store's upkeep to the end: on PostgreSQL it moves the replaced
    versions into their own index."""
    from dataclasses import replace

    from tinycontext.testing.bulk import bulk_id

    rates, upkeep = {}, {}
    chosen = list(range(0, stored, max(1, stored // count)))[:count]
    for name, store in stores.items():
        started = time.perf_counter()
        for n in chosen:
            [new] = memories([texts[n] + " (revised)"], matrix[[(n + 1) % stored]],
                             20_000_000 + n, key, tokenizer)
            old = bulk_id(n)
            new = replace(new, memory=replace(new.memory, supersedes=old))
            store.supersede(old, new, new.memory.created_at)
        rates[name] = len(chosen) / (time.perf_counter() - started)
        started = time.perf_counter()
        while store.maintain_index(key):
            pass
        upkeep[name] = time.perf_counter() - started
    return rates, upkeep


def _database_bytes(url: str) -> dict[str, int]:
    """The database and its main parts, in bytes."""
    import psycopg

    parts = {
        "database": "pg_database_size(current_database())",
        "memories_heap_and_toast": "pg_table_size('tinycontext.memories')",
        "memories_btree_indexes": "(SELECT sum(pg_relation_size(indexrelid)) FROM pg_index "
        "JOIN pg_class c ON c.oid = indexrelid JOIN pg_am a ON a.oid = c.relam "
        "WHERE indrelid = 'tinycontext.memories'::regclass AND a.amname = 'btree')",
        "hnsw_indexes": "(SELECT sum(pg_relation_size(indexrelid)) FROM pg_index "
        "JOIN pg_class c ON c.oid = indexrelid JOIN pg_am a ON a.oid = c.relam "
        "WHERE indrelid = 'tinycontext.memories'::regclass AND a.amname = 'hnsw')",
        "keyword_table_and_gin": "pg_total_relation_size('tinycontext.memory_terms')",
    }
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT " + ", ".join(parts.values())).fetchone()
    return {name: int(value or 0) for name, value in zip(parts, row, strict=True)}


def report(results: dict[str, Any], args: argparse.Namespace) -> None:
    print(f"TinyContext PostgreSQL vs SQLite, model {args.model}, {args.queries} recalls per "
          f"checkpoint, default top_k {10} (candidate pools of 200)")
    print(f"Machine: {machine_line(machine_info())}")
    headers = ["memories", "store", "recall p50 ms", "recall p95 ms", "dense p50 ms",
               "dense p95 ms", "dense recall@10 vs exact", "keyword p50 ms", "keyword p95 ms",
               "service writes/s", "store adds/s", "bulk load/s"]
    table = []
    for row in results["checkpoints"]:
        for name in ("sqlite", "postgres"):
            c = row[name]
            table.append([row["size"], name, c["recall_ms"]["p50"], c["recall_ms"]["p95"],
                          c["dense_ms"]["p50"], c["dense_ms"]["p95"],
                          c["dense_recall_at_10_vs_exact"], c["keyword_ms"]["p50"],
                          c["keyword_ms"]["p95"], c["service_write_per_s"],
                          c["store_add_per_s"], c["bulk_load_per_s"]])
    print_table(headers, table, "Latency, fidelity and writes (writes: batches of 32)")
    print_table(["store", "supersedes/s (one update at a time, at the store)",
                 "upkeep after them (s)"],
                [[name, rate, results["store_upkeep_after_updates_s"][name]]
                 for name, rate in results["store_supersede_per_s"].items()],
                f"Updates after the last checkpoint ({results['checkpoints'][-1]['size']:,} "
                "memories)")
    stored = results["checkpoints"][-1]["postgres"]["memories"]
    sizes = [[name, value / 2**20, value / stored] for name, value in
             results["postgres_bytes"].items()]
    sizes.append(["SQLite file (for comparison)", results["sqlite_bytes"] / 2**20,
                  results["sqlite_bytes"] / stored])
    print_table(["PostgreSQL part", "MiB", "bytes per memory"], sizes,
                f"Storage at {stored:,} memories")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    results = run(args)
    report(results, args)
    write_json(args.json_out, "pg", args, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
