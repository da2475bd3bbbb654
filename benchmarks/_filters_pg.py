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


def prefix_rows(rows: dict[str, Any], memories: int) -> int:
    """How many stored rows the first `memories` memories have (rows are in memory order)."""
    return int((rows["number"] < memories).sum())


def pg_url(args: argparse.Namespace, source: Path, count: int,
           progress: Progress) -> tuple[str, Any]:
    """(store URL, server) of a database holding the first `count` rows of `source`."""
    from benchmarks._pg_bulk import copy_store, fresh_database, kept_postgres
    from tinycontext import TinyContextConfig, build_service
    from tinycontext.testing import HashEmbedder

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
    # The built store opened as a user would; rows are copied with their stored vectors, so
    # no model is needed (the embedder is never called).
    reader = build_service(TinyContextConfig(memory_db_path=str(source)),
                           embedder=HashEmbedder(), background=False)
    try:
        copy_store(reader.store, url, server.get_uri().replace("/postgres?", f"/{name}?"),
                   count, progress)
    finally:
        reader.close()
    progress(f"copied {count:,} rows into PostgreSQL in {time.perf_counter() - started:.0f} s")
    marker.write_text(json.dumps(wanted), encoding="utf-8")
    os.chmod(marker, 0o600)
    return url, server
