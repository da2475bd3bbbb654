"""`tinycontext serve|rest` in hosted mode as subprocesses: real model, real HTTP, real files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.e2e.servers import cli_env, free_port, run_cli, served_process, wait_for_health
from tests.integration.hosted_support import (
    OPERATOR,
    TOKEN,
    UNTRUSTED,
    USER_HEADER,
    hosted_env,
    proxy_headers,
    snapshot,
)

pytestmark = pytest.mark.slow


def _tenants(tmp_path: Path) -> Path:
    folder = tmp_path / "tenants"
    folder.mkdir(mode=0o700)
    return folder


def test_hosted_serve_routes_each_user_and_refuses_the_unproven(tmp_path: Path) -> None:
    tenants = _tenants(tmp_path)
    env = hosted_env(tenants, TINYCONTEXT_MANAGEMENT="on", TINYCONTEXT_MANAGEMENT_TOKEN=OPERATOR)
    with served_process(tmp_path, "serve", **env) as (base, _):
        untouched = snapshot(tenants)
        untrusted = httpx.Client(transport=httpx.HTTPTransport(local_address=UNTRUSTED))
        refused = untrusted.post(base + "/mcp", headers=proxy_headers("alice"), json={})
        assert refused.status_code == 401 and refused.json()["detail"]["code"] == "unauthorized"
        assert untrusted.get(base + "/health").status_code == 200
        assert snapshot(tenants) == untouched

        who = {"user": "alice"}

        async def hook(request: Any) -> None:
            request.headers[USER_HEADER] = who["user"]

        async def main() -> dict[str, Any]:
            seen: dict[str, Any] = {}
            http = httpx2.AsyncClient(headers={"X-TinyContext-Proxy-Token": TOKEN}, timeout=60,
                                      event_hooks={"request": [hook]})
            async with http, Client(streamable_http_client(base + "/mcp", http_client=http),
                                    mode="legacy") as client:
                for user, fact in (("alice", "Alice's cat is called Miso."),
                                   ("bob", "Bob's cat is called Pepper.")):
                    who["user"] = user
                    saved = await client.call_tool("save_memories",
                                                   {"memories": [{"content": fact}]})
                    seen[user] = json.loads(saved.content[0].text)["saved"][0]
                for user in ("bob", "alice"):
                    who["user"] = user
                    recall = await client.call_tool("recall_memories",
                                                    {"query": "what is the cat called"})
                    seen[f"{user}-recall"] = recall.content[0].text
                    overview = await client.read_resource("tinycontext://manage/overview")
                    seen[f"{user}-overview"] = json.loads(overview.contents[0].text)
                who["user"] = "bob"
                seen["bob-get-alice"] = await client.call_tool(
                    "get_memory", {"memory_id": seen["alice"]["ref"]})
            return seen

        seen = anyio.run(main)
    assert "Pepper" in seen["bob-recall"] and "Miso" not in seen["bob-recall"]
    assert "Miso" in seen["alice-recall"] and "Pepper" not in seen["alice-recall"]
    assert seen["alice-overview"]["counts"]["total"] == 1
    assert seen["bob-overview"]["counts"]["total"] == 1
    assert seen["bob-get-alice"].content[0].text.startswith("memory_not_found:")
    names = sorted(p.name for p in tenants.glob("*.db"))
    assert len(names) == 2 and all(len(n) == 64 + 3 for n in names)
    assert not (tmp_path / "store").exists()  # the single-user store stays untouched


def test_hosted_rest_command(tmp_path: Path) -> None:
    tenants = _tenants(tmp_path)
    with served_process(tmp_path, "rest", **hosted_env(tenants)) as (base, _):
        alice = httpx.Client(base_url=base, headers=proxy_headers("alice"))
        bob = httpx.Client(base_url=base, headers=proxy_headers("bob"))
        saved = alice.post("/save_memories", json={"memories": [
            {"content": "Alice's flight leaves at 7:40 from gate B12."}]})
        assert saved.status_code == 200
        assert bob.get("/recall_memories", params={"query": "flight gate"}).json()[
            "memories"] == []
        assert alice.get("/recall_memories", params={"query": "flight gate"}).json()[
            "memories"][0]["content"].startswith("Alice's flight")
        anonymous = httpx.get(base + "/list_memories")
        assert anonymous.status_code == 401
        assert anonymous.json()["detail"]["code"] == "unauthorized"


def test_rest_import_path_serves_hosted_mode_too(tmp_path: Path) -> None:
    tenants = _tenants(tmp_path)
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "tinycontext.adapters.rest_api:app", "--host",
         "127.0.0.1", "--port", str(port), "--no-proxy-headers", "--log-level", "warning"],
        env=cli_env(tmp_path, **hosted_env(tenants)), stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_health(base + "/health", process=process, timeout=60)
        assert httpx.get(base + "/list_memories").status_code == 401
        listed = httpx.get(base + "/list_memories", headers=proxy_headers("carol"))
        assert listed.status_code == 200 and listed.json()["total_count"] == 0
    finally:
        process.terminate()
        process.wait(timeout=15)


@pytest.mark.parametrize("command", ["serve", "rest"])
@pytest.mark.parametrize("change,needle", [
    ({"TINYCONTEXT_TENANT_SECRET": "s" * 20}, "TINYCONTEXT_TENANT_SECRET is 20 bytes"),
    ({"TINYCONTEXT_TRUSTED_PROXY_TOKEN": "t" * 31}, "TINYCONTEXT_TRUSTED_PROXY_TOKEN is 31 bytes"),
    ({"TINYCONTEXT_TRUSTED_PROXY_CIDRS": "10.0.0.300/32"}, "is not a valid CIDR"),
    ({"TINYCONTEXT_TENANT_STORE_DIR": "/nonexistent/tenants"}, "does not exist"),
    ({"TINYCONTEXT_TENANCY": "off", "TINYCONTEXT_MANAGEMENT": "on"},
     "TINYCONTEXT_MANAGEMENT=on over HTTP needs a way to authenticate"),
])
def test_startup_refusals(tmp_path: Path, command: str, change: dict[str, str],
                          needle: str) -> None:
    tenants = _tenants(tmp_path)
    done = run_cli(tmp_path, command, "--port", str(free_port()),
                   **{**hosted_env(tenants), **change}, timeout=60)
    assert done.returncode == 2, done.stderr
    assert needle in done.stderr and "refused to start" in done.stderr
    assert TOKEN not in done.stderr
    assert list(tenants.iterdir()) == [] and not (tmp_path / "store").exists()


def test_doctor_reports_hosted_mode(tmp_path: Path) -> None:
    tenants = _tenants(tmp_path)
    good = run_cli(tmp_path, "doctor", "--json", **hosted_env(tenants))
    report = json.loads(good.stdout)
    hosted = [c for c in report["checks"] if c["name"] == "hosted mode"]
    assert good.returncode == 0 and hosted and hosted[0]["ok"]
    assert TOKEN not in good.stdout and report["server"]["trusted_proxy_token"] == "(set)"
    bad = run_cli(tmp_path, "doctor", **hosted_env(tenants, TINYCONTEXT_TENANT_SECRET="short"))
    assert bad.returncode == 1 and "[FAIL] hosted mode" in bad.stdout


def test_stdio_management_views_for_the_local_operator(tmp_path: Path) -> None:
    from mcp.client.stdio import StdioServerParameters

    from tests.e2e.servers import tinycontext_command

    command = tinycontext_command()
    params = StdioServerParameters(command=command[0], args=[*command[1:], "mcp"],
                                   env=cli_env(tmp_path, TINYCONTEXT_MANAGEMENT="on"))

    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        async with Client(params) as client:
            await client.call_tool("save_memories", {"memories": [
                {"content": "The release train leaves every second Wednesday."}]})
            manifest = await client.read_resource("tinycontext://manage/manifest")
            service = await client.read_resource("tinycontext://manage/service")
            return json.loads(manifest.contents[0].text), json.loads(service.contents[0].text)

    manifest, service = anyio.run(main)
    assert manifest["mode"] == "single-user"
    assert all(view["available"] for view in manifest["views"])  # no token on stdio
    assert service["stores"]["store_count"] == 1 and service["embedding"]["dimensions"] == 384
