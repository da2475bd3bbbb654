"""Data steps of PostgreSQL schema migrations that SQL alone cannot do (they need Python's
tokenising and stemming), run inside the migration's transaction.

Version 2 (save-time context and the stemmed recall index): every existing memory gets as
context the memory saved just before it in its session (within the default window), and its
`recall` tsvector is built. Rows are read tenant by tenant: row-level security shows a
transaction only the tenant named by its setting.

Version 3 (tags and "as of"): a replaced version without its supersede time gets its
successor's creation time.
"""

from __future__ import annotations

from typing import Any

from tinycontext.domain.context import CONTEXT_MIN_SIMILARITY, DEFAULT_WINDOW_MINUTES

from .text import recall_tsvector_literal, tenant_tag

BATCH = 1000


def backfill_context_and_recall(conn: Any, schema: str, tenant_setting: str) -> None:
    tenants = [r[0] for r in conn.execute(
        f"SELECT DISTINCT tenant FROM {schema}.memory_terms WHERE recall IS NULL"
    ).fetchall()]
    for tenant in tenants:
        conn.execute("SELECT set_config(%s, %s, true)", (tenant_setting, tenant))
        conn.execute(
            f"UPDATE {schema}.memories m SET context_id = o.prev_id FROM ("
            "SELECT seq, created_at, embedding, dims, lag(id) OVER w AS prev_id, "
            "lag(created_at) OVER w AS prev_at, lag(embedding) OVER w AS prev_embedding, "
            "lag(dims) OVER w AS prev_dims "
            f"FROM {schema}.memories WHERE tenant = %s AND kind = 'episodic' "
            "WINDOW w AS (PARTITION BY session_id ORDER BY seq)) o "
            "WHERE m.seq = o.seq AND o.prev_id IS NOT NULL "
            "AND o.created_at::timestamptz - o.prev_at::timestamptz <= %s * interval '1 minute' "
            "AND o.dims = o.prev_dims AND 1 - (o.embedding <=> o.prev_embedding) >= %s",
            (tenant, DEFAULT_WINDOW_MINUTES, CONTEXT_MIN_SIMILARITY),
        )
        tag, after = tenant_tag(tenant), 0
        while True:
            rows = conn.execute(
                f"SELECT m.seq, m.content, p.content FROM {schema}.memories m "
                f"LEFT JOIN {schema}.memories p ON p.tenant = m.tenant AND p.id = m.context_id "
                "WHERE m.tenant = %s AND m.seq > %s ORDER BY m.seq LIMIT %s",
                (tenant, after, BATCH),
            ).fetchall()
            if not rows:
                break
            with conn.cursor() as cur:
                cur.executemany(
                    f"UPDATE {schema}.memory_terms SET recall = %s::tsvector WHERE seq = %s",
                    [(recall_tsvector_literal(own, ctx, tag), seq) for seq, own, ctx in rows],
                )
            after = rows[-1][0]


def backfill_supersede_times(conn: Any, schema: str, tenant_setting: str) -> None:
    tenants = [r[0] for r in conn.execute(
        f"SELECT DISTINCT tenant FROM {schema}.memory_terms").fetchall()]
    for tenant in tenants:
        conn.execute("SELECT set_config(%s, %s, true)", (tenant_setting, tenant))
        conn.execute(
            f"UPDATE {schema}.memories m SET superseded_at = s.created_at "
            f"FROM {schema}.memories s WHERE m.tenant = %s AND s.tenant = m.tenant "
            "AND s.id = m.superseded_by AND m.superseded_by IS NOT NULL "
            "AND m.superseded_at IS NULL",
            (tenant,),
        )
