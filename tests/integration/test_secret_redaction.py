"""Secrets never reach the SQLite file: through REST, MCP and import, the stored content and
every read hold the placeholder, and the save/update results say what was replaced."""

from __future__ import annotations

import base64
import io
import itertools
import json
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import httpx
from mcp import Client

from tests.e2e.servers import uvicorn_thread
from tests.fakes import FixedClock, HashEmbedder, WordTokenizer
from tinycontext.adapters.mcp.server import create_mcp_server
from tinycontext.adapters.sqlite.store import SqliteStore
from tinycontext.app.service import MemoryService
from tinycontext.app.service_source import OneService
from tinycontext.app.transfer import export_jsonl, import_jsonl
from tinycontext.config.engine import TinyContextConfig
from tinycontext.rest import create_app

STRIPE = "sk_live_2jaqzlAjl9teKoOzWsVMi0HQ"
PASSWORD = "Sup3r-S3cret"
SAVED = f"Billing calls Stripe with {STRIPE}"
STORED = "Billing calls Stripe with [redacted:stripe-key]"
UPDATED = f"Billing moved: postgresql://billing:{PASSWORD}@db.internal/billing"
STORED_UPDATE = "Billing moved: postgresql://billing:[redacted:password]@db.internal/billing"


def _service(db: Path, **config: Any) -> MemoryService:
    counter = itertools.count(1)
    store = SqliteStore(db)
    return MemoryService(
        store, HashEmbedder(), WordTokenizer(), FixedClock(),
        TinyContextConfig(memory_db_path=str(db), **config), background=False, release=store.close,
        new_id=lambda: f"{next(counter):08x}-0000-4000-8000-000000000000",
    )


def _file_bytes(db: Path) -> bytes:
    """Everything SQLite wrote: the database and its write-ahead log."""
    return b"".join(p.read_bytes() for p in db.parent.iterdir() if p.name.startswith(db.name))


def _stored_contents(db: Path) -> list[str]:
    with sqlite3.connect(db) as connection:
        return [row[0] for row in connection.execute("SELECT content FROM memories ORDER BY 1")]


def test_rest_save_update_recall_hold_the_placeholder(tmp_path: Path) -> None:
    db = tmp_path / "rest.db"
    service = _service(db)
    app = create_app(OneService(service))
    with uvicorn_thread(app) as base, httpx.Client(base_url=base) as api:
        saved = api.post("/save_memories", json={"memories": [{"content": SAVED}]}).json()
        entry = saved["saved"][0]
        assert entry["notice"].startswith("1 secret (1 stripe-key) was replaced by "
                                          "[redacted:<type>] before saving")
        updated = api.post("/update_memory", json={"memory_id": entry["ref"],
                                                   "content": UPDATED}).json()
        assert updated["notice"].startswith("1 secret (1 password) was replaced")
        got = api.get("/get_memory", params={"memory_id": updated["ref"]}).json()
        recalled = api.post("/recall_memories", json={"query": "billing database"}).json()
        listed = api.get("/list_memories").json()
        responses = json.dumps([saved, updated, got, recalled, listed])
    service.close()
    assert got["content"] == STORED_UPDATE
    assert [m["content"] for m in recalled["memories"]] == [STORED_UPDATE]
    assert STRIPE not in responses and PASSWORD not in responses
    assert _stored_contents(db) == [STORED, STORED_UPDATE]
    raw = _file_bytes(db)
    assert STRIPE.encode() not in raw and PASSWORD.encode() not in raw


def test_mcp_save_update_recall_hold_the_placeholder(tmp_path: Path) -> None:
    db = tmp_path / "mcp.db"
    service = _service(db)

    async def main() -> list[Any]:
        async with Client(create_mcp_server(OneService(service), warm=False)) as client:
            async def call(name: str, args: dict[str, Any]) -> Any:
                result = await client.call_tool(name, args)
                assert not result.is_error, result.content
                return result.structured_content or result.content[0].text  # type: ignore[union-attr]

            saved = await call("save_memories", {"memories": [{"content": SAVED}]})
            updated = await call("update_memory", {"memory_id": saved["saved"][0]["ref"],
                                                   "content": UPDATED})
            recalled = await call("recall_memories", {"query": "billing database"})
            got = await call("get_memory", {"memory_id": updated["ref"]})
            return [saved, updated, recalled, got]

    saved, updated, recalled, got = anyio.run(main)
    service.close()
    assert saved["saved"][0]["notice"].startswith("1 secret (1 stripe-key) was replaced")
    assert updated["notice"].startswith("1 secret (1 password) was replaced")
    assert STORED_UPDATE in recalled and STORED_UPDATE in got
    assert STRIPE not in json.dumps([saved, updated, recalled, got])
    assert PASSWORD not in json.dumps([saved, updated, recalled, got])
    assert _stored_contents(db) == [STORED, STORED_UPDATE]


def _export_with_a_secret(tmp_path: Path) -> list[str]:
    """An export of an older store that kept a secret, with the vector made from it."""
    old = _service(tmp_path / "old.db", redact_secrets=False)
    old.save([{"content": SAVED}, {"content": "Deploys happen on Fridays."}])
    out = io.StringIO()
    export_jsonl(old.store, out)
    old.close()
    lines = out.getvalue().splitlines(keepends=True)
    assert STRIPE in lines[0] and json.loads(lines[0])["embedding"]
    return lines


def test_import_replaces_secrets_and_embeds_the_replaced_text(tmp_path: Path) -> None:
    lines = _export_with_a_secret(tmp_path)
    db = tmp_path / "new.db"
    service = _service(db)
    report = import_jsonl(service, lines)
    assert (report.imported, report.redacted, report.reembedded) == (2, 1, 1)
    assert _stored_contents(db) == [STORED, "Deploys happen on Fridays."]
    out = io.StringIO()
    export_jsonl(service.store, out)
    first = json.loads(out.getvalue().splitlines()[0])
    # The vector is the placeholder text's own, not the one made from the secret.
    assert base64.b64decode(first["embedding"]) == HashEmbedder().embed([STORED])[0]
    service.close()
    assert STRIPE.encode() not in _file_bytes(db)


def test_import_keeps_content_when_redaction_is_off(tmp_path: Path) -> None:
    lines = _export_with_a_secret(tmp_path)
    db = tmp_path / "new.db"
    service = _service(db, redact_secrets=False)
    report = import_jsonl(service, lines)
    service.close()
    assert (report.imported, report.redacted, report.reembedded) == (2, 0, 0)
    assert _stored_contents(db) == [SAVED, "Deploys happen on Fridays."]
