"""PostgreSQL for benchmark_filters.py --postgres: the built SQLite store's first N memories
(every version with its vector, token bits, tags and times) copied into a database of a kept
pgserver in --store-dir (built once, reused while the SQLite build is the same)."""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

from benchmarks._common import Progress

BATCH = 1000


def prefix_rows(rows: dict[str, Any], memories: int) -> int:
    """How many stored rows the first `memories` memories have (rows are in memory order)."""
    return int((rows["number"] < memories).sum())


def pg_url(args: argparse.Namespace, source: Path, count: int,
           progress: Progress) -> tuple[str, Any]:
    """(store URL, server) of a database holding the first `count` rows of `source`."""
    from benchmarks._pg_bulk import fresh_database, kept_postgres

    folder = args.store_dir / "pg"
    folder.mkdir(mode=0o700, exist_ok=True)
    template, server = kept_postgres(folder, None)
    name = f"tc_filters_{args.pg_memories}"
    url = template.replace("/tinycontext_bench?", f"/{name}?")
    marker = folder / f"{name}.json"
    wanted = {"build": json.loads((args.store_dir / "build.json").read_text()), "rows": count}
    if marker.exists() and json.loads(marker.read_text()) == wanted:
        return url, server
    marker.unlink(missing_ok=True)
    url = fresh_database(server.get_uri(), template, name)
    started = time.perf_counter()
    _copy(source, url, server.get_uri().replace("/postgres?", f"/{name}?"), count, progress)
    progress(f"copied {count:,} rows into PostgreSQL in {time.perf_counter() - started:.0f} s")
    marker.write_text(json.dumps(wanted), encoding="utf-8")
    os.chmod(marker, 0o600)
    return url, server



def _copy(source: Path, url: str, admin_url: str, count: int, progress: Progress) -> None:
    """Rows through the store's own insert (so its labels, terms and times are what it
    writes), with the HNSW index dropped during the load and built in one go after it, as
    an index over many rows is built (an insert-by-insert graph costs far longer)."""
    import psycopg

    from tinycontext.adapters.postgres.schema import dense_index_name, ensure_dense_index
    from tinycontext.adapters.postgres.store import PostgresStore
    from tinycontext.adapters.sqlite.store import SqliteStore
    from tinycontext.ports.store import NewMemory

    src, dst = SqliteStore(source), PostgresStore(url)
    after = done = 0
    dims = 0
    try:
        while done < count:
            page = src.export_page(after, min(BATCH, count - done), None)
            if not page:
                break
            bits = src.token_bits([m.id for _, m, _ in page])
            dst.add([NewMemory(m, v, tokens=bits[m.id][0] if m.id in bits else None)
                     for _, m, v in page])
            if done == 0:  # the store made its schema and index with this first batch
                dims = len(page[0][2] or b"") // 4
                with psycopg.connect(admin_url, autocommit=True) as conn:
                    conn.execute(f"DROP INDEX IF EXISTS tinycontext.{dense_index_name(dims)}")
            after, done = page[-1][0], done + len(page)
            progress.tick(f"PostgreSQL: copied {done:,}/{count:,}")
    finally:
        src.close()
        dst.close()
    progress("PostgreSQL: building the HNSW index")
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute("SET maintenance_work_mem = '1GB'")
        ensure_dense_index(conn, dims)
        conn.execute("VACUUM ANALYZE tinycontext.memories")
        conn.execute("VACUUM ANALYZE tinycontext.memory_terms")
        conn.execute("VACUUM ANALYZE tinycontext.memory_labels")
