"""Hosted mode with encryption at rest, every log record (DEBUG, all loggers) and every span and
metric point captured, written as JSON to OUT (tests/integration/test_encryption_key_leaks.py).

    python -m tests.integration.hosted_key_probe FOLDER OUT

FOLDER holds `key` and `other` (key files) and gets the users' store folder. A real hosted
server (REST, MCP at /mcp and the memory browser at /ui, uvicorn on loopback:
hosted_support.py) serves users whose files are encrypted with the keys derived for them: every
REST operation, MCP tools, an export download, the management views (the operators' Service
view among them), refused callers, a user whose file predates the key (store_locked until
`tinycontext encrypt --hosted-folder` converts it) and the server started again with another
key (store_locked). `doctor` and `encrypt` run as CLI commands. A fresh interpreter, as
encryption_key_probe.py says why.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

from tests.integration.encryption_key_probe import Telemetry, capture_logs, cli
from tests.integration.hosted_support import UNTRUSTED, hosted_env, hosted_server, proxy_headers

# Realistic user ids (an e-mail address, an OIDC subject): neither may show anywhere.
ALICE = "alice.q7Zr2@example.org"
CAROL = "auth0|carol-W3nx8Kp1"
OPERATOR_TOKEN = "operator-Wq3vN8zR5tY1uK7mL2pB9xC4"


def _reply(name: str, response: Any) -> dict[str, Any]:
    return {"step": name, "status": response.status_code, "body": response.text}


def _rest(server: Any, user: str, steps: list[dict[str, Any]]) -> None:
    """Every REST operation as `user`, then the memory browser's export."""
    with server.client(**proxy_headers(user)) as http:
        saved = http.post("/save_memories", json={"session_id": "garden", "memories": [
            {"content": f"note {n} about the roses", "tags": ["garden"]} for n in range(3)]})
        steps.append(_reply("save", saved))
        first = saved.json()["saved"][0]["ref"]
        steps.append(_reply("recall", http.post("/recall_memories", json={"query": "roses"})))
        steps.append(_reply("list", http.get("/list_memories", params={"tags": "garden"})))
        steps.append(_reply("get", http.get("/get_memory", params={"memory_id": first})))
        steps.append(_reply("update", http.post("/update_memory", json={
            "memory_id": first, "content": "note 0 about the tulips"})))
        steps.append(_reply("delete", http.post("/delete_memory", json={
            "memory_id": saved.json()["saved"][1]["ref"]})))
        steps.append(_reply("export", http.get("/ui/export/download",
                                                params={"embeddings": "1"})))


async def _mcp(base: str, user: str) -> list[dict[str, Any]]:
    """A save and a recall through the MCP tools as `user` (errors come back as tool text)."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    found = []
    http = httpx2.AsyncClient(headers=proxy_headers(user), timeout=30)
    async with http, Client(streamable_http_client(base + "/mcp", http_client=http)) as client:
        for tool, args in (("save_memories", {"memories": [{"content": "rose pruning day"}]}),
                           ("recall_memories", {"query": "roses"})):
            result = await client.call_tool(tool, args)
            found.append({"step": f"mcp {tool}", "error": result.is_error,
                          "body": result.content[0].text})
    return found


async def _views(base: str, user: str) -> list[dict[str, Any]]:
    """The management views as `user` with the operator's token: their memories and
    overview, and the operators' Service view (open stores, disk use)."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    found = []
    headers = proxy_headers(user, Authorization=f"Bearer {OPERATOR_TOKEN}")
    http = httpx2.AsyncClient(headers=headers, timeout=30)
    async with http, Client(streamable_http_client(base + "/mcp", http_client=http)) as client:
        for view in ("memories", "overview", "service"):
            result = await client.read_resource(f"tinycontext://manage/{view}")
            found.append({"step": f"view {view}", "body": result.contents[0].text})
    return found


def _refused(server: Any, steps: list[dict[str, Any]]) -> None:
    """Callers the gate refuses: a wrong token, no token, a peer that is not the proxy."""
    for name, peer, headers in (("wrong token", "127.0.0.1", proxy_headers(ALICE, "x" * 40)),
                                ("no token", "127.0.0.1", proxy_headers(ALICE, None)),
                                ("untrusted peer", UNTRUSTED, proxy_headers(ALICE))):
        with server.client(peer, **headers) as http:
            steps.append(_reply(name, http.get("/list_memories")))


def _as(server: Any, user: str, name: str, path: str = "/list_memories",
        **body: Any) -> dict[str, Any]:
    """One request as `user`: GET `path`, or POST `body` to it."""
    with server.client(**proxy_headers(user)) as http:
        return _reply(name, http.post(path, json=body) if body else http.get(path))


def main() -> None:
    folder, target = Path(sys.argv[1]), Path(sys.argv[2])
    logs = capture_logs()
    telemetry = Telemetry()

    import anyio

    from tinycontext.adapters.sqlite.driver import use_sqlcipher
    from tinycontext.domain.errors import TinyContextError

    use_sqlcipher()  # the process's one SQLite, for the files made before the key too
    key, other = folder / "key", folder / "other"
    store_dir = folder / "tenants"
    os.environ.update(hosted_env(store_dir))  # what `doctor` checks and `encrypt` is run for
    management = {"TINYCONTEXT_MANAGEMENT": "on", "TINYCONTEXT_MANAGEMENT_TOKEN": OPERATOR_TOKEN}
    steps: list[dict[str, Any]] = []
    with hosted_server(folder) as server:  # before the key was set: Carol's file is plain
        steps.append(_as(server, CAROL, "carol plain save", "/save_memories",
                         memories=[{"content": "carol's seed order"}]))
    with hosted_server(folder, key_file=key, ui=True, **management) as server:
        _rest(server, ALICE, steps)
        steps += anyio.run(_mcp, server.base, ALICE)
        steps += anyio.run(_views, server.base, ALICE)
        _refused(server, steps)
        steps.append(_as(server, CAROL, "carol before encrypt"))
        steps += anyio.run(_mcp, server.base, CAROL)
    right = {"TINYCONTEXT_ENCRYPTION_KEY_FILE": str(key)}
    wrong = {"TINYCONTEXT_ENCRYPTION_KEY": other.read_text().strip()}
    steps += [cli("encrypt", "--hosted-folder", str(store_dir), **right),
              cli("doctor", "--json", **right)]
    with hosted_server(folder, key_file=key) as server:
        steps.append(_as(server, CAROL, "carol after encrypt"))
    with hosted_server(folder, key_file=other) as server:  # started with another key
        steps.append(_as(server, ALICE, "alice other key"))
        steps += anyio.run(_mcp, server.base, ALICE)
        tenant, service = server.stores.acquire(ALICE)
        try:
            service.list_page()
        except TinyContextError:  # its traceback goes to the log as a caller's would
            logging.getLogger("probe").debug("refused open", exc_info=True)
        finally:
            server.stores.release(tenant, service)
    steps += [cli("encrypt", "--hosted-folder", str(store_dir), **wrong),
              cli("doctor", "--json", **wrong)]
    target.write_text(json.dumps({
        "logs": logs.getvalue(), "steps": steps, **telemetry.captured(),
        "files": sorted(p.name for p in store_dir.iterdir()),
    }, default=repr))


if __name__ == "__main__":
    main()
