"""Two `tinycontext serve` replicas on different loopback ports sharing one PostgreSQL.

Each replica is a separate process with its own model, pool and caches: whatever one writes,
the other must read, update and delete, and concurrent saves through both must all land.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.e2e.servers import served_process
from tests.pg_fixture import temporary_database
from tinycontext.adapters.postgres.store import PostgresStore
from tinycontext.app.transfer import iter_stored

pytestmark = pytest.mark.slow


@pytest.fixture
def replicas(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str, str]]:
    with temporary_database(request) as url, ExitStack() as stack:
        bases = []
        for name in ("one", "two"):
            folder = tmp_path / name
            folder.mkdir()
            base, _ = stack.enter_context(
                served_process(folder, "serve", TINYCONTEXT_STORE_URL=url))
            bases.append(base)
        assert bases[0] != bases[1]
        yield bases[0], bases[1], url


async def call(client: Client, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, (tool, result.content)
    return result.content[0].text  # type: ignore[union-attr,no-any-return]


async def failure(client: Client, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error
    return result.content[0].text  # type: ignore[union-attr,no-any-return]


def test_one_replica_writes_the_other_reads_updates_and_deletes(
    replicas: tuple[str, str, str],
) -> None:
    one, two, _ = replicas

    async def main() -> None:
        async with Client(one + "/mcp") as a, Client(two + "/mcp") as b:
            saved = json.loads(await call(a, "save_memories", memories=[
                {"content": "The billing service moved from MySQL to PostgreSQL in March."},
                {"content": "Call the user Marcell.", "kind": "profile"},
            ]))["saved"]
            ref = saved[0]["ref"]
            recalled = await call(b, "recall_memories", query="Which database does billing use?")
            assert f'ref="{ref}"' in recalled and "Call the user Marcell." in recalled

            update = json.loads(await call(
                b, "update_memory", memory_id=ref,
                content="The billing service moved from MySQL to PostgreSQL 16 in April."))
            assert update["supersedes"]["ref"] == ref
            old = await call(a, "get_memory", memory_id=ref)
            assert update["ref"] in old  # superseded, and by what
            assert "PostgreSQL 16 in April" in await call(
                a, "recall_memories", query="billing database")
            assert "memory_already_superseded" in await failure(
                a, "update_memory", memory_id=ref, content="a second, conflicting edit")

            await call(a, "delete_memory", memory_id=update["id"])
            assert (await failure(b, "get_memory", memory_id=update["ref"])).startswith(
                "memory_not_found")
            back = await call(b, "recall_memories", query="billing database")
            assert f'ref="{ref}"' in back and "in March" in back  # the old version is live again

    anyio.run(main)


def test_concurrent_saves_through_both_replicas_lose_nothing(
    replicas: tuple[str, str, str],
) -> None:
    one, two, url = replicas
    per_replica, batches = 12, 3
    written: list[str] = []

    async def main() -> str:
        async with Client(one + "/mcp") as a, Client(two + "/mcp") as b:

            async def save(client: Client, replica: str, n: int) -> None:
                contents = [f"Replica {replica} note {n}.{k}: order {replica}{n}x{k} shipped to "
                            f"warehouse {n * 10 + k}." for k in range(batches)]
                answer = json.loads(await call(
                    client, "save_memories", memories=[{"content": c} for c in contents]))
                assert len(answer["saved"]) == batches and not answer.get("skipped_duplicates")
                written.extend(contents)

            async with anyio.create_task_group() as group:
                for n in range(per_replica):
                    group.start_soon(save, a, "one", n)
                    group.start_soon(save, b, "two", n)
            return await call(b, "list_memories", limit=1)

    listing = anyio.run(main)
    assert len(written) == 2 * per_replica * batches
    assert f'total_count="{len(written)}"' in listing
    # Every saved text is in the database exactly once, whichever replica took it.
    store = PostgresStore(url)
    try:
        assert sorted(m.content for m, _ in iter_stored(store)) == sorted(written)
    finally:
        store.close()
