"""Reading a tenant's rows out whole: the export's pages (with vectors) and doctor's facts."""

from __future__ import annotations

from typing import Any

from tinycontext import native
from tinycontext.domain.memory import Memory

from .connection import PgPool
from .rows import COLUMNS, MEMORIES, WIDTH, memory_from_row
from .schema import SCHEMA, SCHEMA_VERSION


def export_page(
    pool: PgPool, tenant: str, after: int, limit: int, session_id: str | None
) -> list[tuple[int, Memory, bytes | None]]:
    """Memories (superseded too) after row `after`, oldest first, with their vectors."""
    np = native.numpy()

    where, params = "m.tenant = %s AND m.seq > %s", [tenant, after]
    if session_id is not None:
        where += " AND m.session_id = %s"
        params.append(session_id)
    # The memory columns first, as every other read, so one decoder (memory_from_row) serves.
    rows = pool.read(
        f"SELECT {COLUMNS}, m.seq, m.embedding::text FROM {MEMORIES} m WHERE {where} "
        "ORDER BY m.seq LIMIT %s",
        [*params, limit],
    )
    out = []
    for r in rows:
        vector = None
        if r[WIDTH + 1] is not None:
            vector = np.array(r[WIDTH + 1][1:-1].split(","), dtype="<f4").tobytes()
        out.append((int(r[WIDTH]), memory_from_row(r), vector))
    return out


def diagnostics(pool: PgPool, tenant: str) -> dict[str, Any]:
    """Server, pgvector and schema facts for `doctor` (the URL with its password hidden)."""
    facts: dict[str, Any] = {"url": pool.redacted_url, "tenant": tenant}
    rows = pool.read(
        "SELECT current_setting('server_version'), "
        "(SELECT extversion FROM pg_extension WHERE extname = 'vector'), "
        f"(SELECT max(version) FROM {SCHEMA}.schema_version), "
        f"(SELECT count(*) FROM {MEMORIES} WHERE tenant = %s AND superseded_by IS NULL)",
        (tenant,),
    )
    server, vector, schema, live = rows[0]
    facts.update(server_version=server, vector_version=vector, schema_version=schema,
                 expected_schema_version=SCHEMA_VERSION, live_memories=int(live))
    return facts
