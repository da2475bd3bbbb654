"""Bulk loading for benchmark_pg_tenants.py: tenants' memories copied into one PostgreSQL
table as the store would write them, and the databases they go in (fresh, or kept between
runs)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from benchmarks._common import Progress
from benchmarks.benchmark_million import stored_items
from benchmarks.benchmark_pg import APP_ROLE

LOAD_BATCH = 1000


def fresh_database(admin_url: str, app_url: str, name: str) -> str:
    """A new database owned by the benchmark role, with pgvector; its store URL."""
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name}")  # a kept load that did not finish
        conn.execute(f"CREATE DATABASE {name} OWNER {APP_ROLE}")
    with psycopg.connect(admin_url.replace("/postgres?", f"/{name}?"), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION vector")
    return app_url.replace("/tinycontext_bench?", f"/{name}?")


def kept_postgres(folder: Path, shared_buffers: str | None) -> tuple[str, Any]:
    """(store URL template, server) of the kept server in `folder`, started by this process
    (so at its priority) with `shared_buffers` (None: the server's default); the benchmark
    role is created on first use."""
    import pgserver
    import psycopg

    from benchmarks.benchmark_pg import DATABASE

    server = pgserver.get_server(folder / "pgdata", cleanup_mode="stop")
    admin = server.get_uri()
    with psycopg.connect(admin, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (APP_ROLE,)).fetchone():
            conn.execute(f"CREATE ROLE {APP_ROLE} LOGIN")
        wanted = shared_buffers or "DEFAULT"
        current = conn.execute("SELECT setting FROM pg_file_settings "
                               "WHERE name = 'shared_buffers' AND applied").fetchone()
        if (current[0] if current else "DEFAULT") != wanted:
            if shared_buffers:
                conn.execute(f"ALTER SYSTEM SET shared_buffers = '{shared_buffers}'")
            else:
                conn.execute("ALTER SYSTEM RESET shared_buffers")
            restart = True
        else:
            restart = False
    if restart:  # shared_buffers takes effect at start
        server.cleanup()
        server = pgserver.get_server(folder / "pgdata", cleanup_mode="stop")
    return admin.replace("postgres:@/postgres?", f"{APP_ROLE}@/{DATABASE}?"), server


def text_rows(first: list[str], texts: Any, count: int, tokenizer: Any,
              progress: Progress) -> list[tuple[str, int, str, str]]:
    """(content, tokens, terms literal, recall literal) of `count` distinct texts, the
    literals tagged for tenant-00000 (another tenant's tag replaces it: lexemes hold only
    letters and digits, so the tag appears nowhere else)."""
    from tinycontext.adapters.postgres.text import (
        recall_tsvector_literal,
        tenant_tag,
        tsvector_literal,
    )

    tag = tenant_tag("tenant-00000")
    out = []
    for i in range(count):
        text = first[i] if i < len(first) else next(texts)
        out.append((text, tokenizer.count(text), tsvector_literal(text, tag),
                    recall_tsvector_literal(text, None, tag)))
        progress.tick(f"prepared {i + 1:,}/{count:,} texts")
    return out


def load(url: str, admin_url: str, layout: tuple[int, int], matrix: Any, made: list[Any],
         rows_of_text: list[tuple[str, int, str, str]], key: str, tokenizer: Any,
         progress: Progress) -> dict[str, Any]:
    """The store creates its schema with the first tenant's first batch; the rest is copied
    in as the store writes it (its own tsvector literals, the vector's text form), by COPY
    as the database owner: row-level security admits no COPY FROM, and row-by-row inserts
    ran at ~300/s on this loaded machine (1,000,000 rows would take an hour). Tenants share
    the prepared texts (tenant t starts at text t x memories-each, wrapping around); every
    row has its own vector."""
    import numpy as np
    import psycopg

    from tinycontext.adapters.postgres.schema import dense_index_name
    from tinycontext.adapters.postgres.store import PostgresStore
    from tinycontext.adapters.postgres.text import tenant_tag
    from tinycontext.domain.memory import ref_of
    from tinycontext.testing.bulk import bulk_id

    tenants, each = layout
    pool = len(rows_of_text)
    rng = np.random.default_rng(1)
    started = time.perf_counter()
    store = PostgresStore(url, tenant="tenant-00000")  # creates the schema and the index
    head = min(each, LOAD_BATCH, len(made))
    store.add(stored_items([r[0] for r in rows_of_text[:head]], matrix[:head],
                           [b for _, b in made[:head]], 0, key, tokenizer))
    store.close()
    tag0 = tenant_tag("tenant-00000")
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f"DROP INDEX tinycontext.{dense_index_name(matrix.shape[1])}")
        conn.execute("CREATE TEMP TABLE incoming (tenant text COLLATE \"C\", id text "
                     "COLLATE \"C\", terms text, recall text)")
        done = head
        for t in range(tenants):
            tenant, tag = f"tenant-{t:05d}", tenant_tag(f"tenant-{t:05d}")
            for start in range(head if t == 0 else 0, each, 5 * LOAD_BATCH):
                span = range(t * each + start, t * each + min(each, start + 5 * LOAD_BATCH))
                # The vector's text form from integers (exact for the 1e-8 grid the matrix
                # was rounded to): formatting the floats themselves dominated the load.
                grid = np.rint(matrix[span.start:span.stop] * 1e8).astype(np.int64).tolist()
                with conn.transaction():
                    with conn.cursor().copy(
                        "COPY tinycontext.memories (tenant, id, ref, content, kind, created_at, "
                        "content_tokens, embedding, dims, embedding_model, token_bits) "
                        "FROM STDIN"
                    ) as copy:
                        for n, values in zip(span, grid, strict=True):
                            text, tokens = rows_of_text[n % pool][:2]
                            bits = made[n if n < len(made) else int(rng.integers(len(made)))][1]
                            memory_id = bulk_id(n)  # as stored_items names the first rows
                            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                  time.gmtime(1_600_000_000 + n * 60))
                            copy.write_row((
                                tenant, memory_id, ref_of(memory_id), text, "episodic", stamp,
                                tokens, "[" + "e-8,".join(map(str, values)) + "e-8]",
                                len(values), key, bits,
                            ))
                    with conn.cursor().copy("COPY incoming FROM STDIN") as copy:
                        for n in span:
                            _, _, terms, recall = rows_of_text[n % pool]
                            copy.write_row((tenant, bulk_id(n),
                                            terms.replace(tag0, tag), recall.replace(tag0, tag)))
                    conn.execute(
                        "INSERT INTO tinycontext.memory_terms (seq, tenant, terms, recall) "
                        "SELECT m.seq, m.tenant, i.terms::tsvector, i.recall::tsvector "
                        "FROM incoming i JOIN tinycontext.memories m "
                        "ON m.tenant = i.tenant AND m.id = i.id")
                    conn.execute("TRUNCATE incoming")
                done += len(span)
                progress.tick(f"loaded {done:,}/{tenants * each:,} "
                              f"({done / (time.perf_counter() - started):,.0f}/s)")
        load_s = time.perf_counter() - started
        conn.execute("VACUUM ANALYZE tinycontext.memories")
        conn.execute("VACUUM ANALYZE tinycontext.memory_terms")
    return {"load_s": load_s, "rows": tenants * each}


def copy_store(src: Any, url: str, admin_url: str, count: int, progress: Progress) -> None:
    """The first `count` rows of store `src` (every version, in insertion order) copied
    through the PostgreSQL store's own insert (so its labels, terms and times are what it
    writes), with the HNSW index dropped during the load and built in one go after it, as
    an index over many rows is built (an insert-by-insert graph costs far longer)."""
    import psycopg

    from tinycontext.adapters.postgres.schema import dense_index_name, ensure_dense_index
    from tinycontext.adapters.postgres.store import PostgresStore
    from tinycontext.ports.store import NewMemory

    dst = PostgresStore(url)
    after = done = 0
    dims = 0
    try:
        while done < count:
            page = src.export_page(after, min(LOAD_BATCH, count - done), None)
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
        dst.close()
    progress("PostgreSQL: building the HNSW index")
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute("SET maintenance_work_mem = '1GB'")
        ensure_dense_index(conn, dims)
        conn.execute("VACUUM ANALYZE tinycontext.memories")
        conn.execute("VACUUM ANALYZE tinycontext.memory_terms")
        conn.execute("VACUUM ANALYZE tinycontext.memory_labels")
