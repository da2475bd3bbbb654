"""The official TypeScript MCP client (@modelcontextprotocol/sdk, from npm) against
`tinycontext serve` in every Streamable HTTP response mode: SSE or JSON, with or without
sessions. Skipped where Node.js and npm are not installed."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.servers import served_process

pytestmark = pytest.mark.slow
HERE = Path(__file__).parent / "typescript"


@pytest.fixture(scope="module")
def client_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("Node.js and npm are needed for the TypeScript client")
    folder = tmp_path_factory.mktemp("ts-client")
    for name in ("package.json", "roundtrip.mjs"):
        shutil.copy(HERE / name, folder / name)
    subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--silent"], cwd=folder,
                   check=True, timeout=300, capture_output=True)
    return folder


@pytest.mark.parametrize("server_args", [("--sse",), (), ("--stateless", "--sse"),
                                         ("--stateless",)],
                         ids=["sse", "json", "stateless-sse", "stateless-json"])
def test_typescript_client_round_trip(tmp_path: Path, client_dir: Path,
                                      server_args: tuple[str, ...]) -> None:
    with served_process(tmp_path, "serve", *server_args) as (base, _):
        done = subprocess.run(["node", str(client_dir / "roundtrip.mjs"), base + "/mcp"],
                              capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout)
    assert seen["tools"] == sorted(["delete_memory", "get_memory", "list_memories",
                                    "recall_memories", "save_memories", "update_memory"])
    ref = seen["saved"]["saved"][0]["ref"]
    assert f'ref="{ref}"' in seen["recall"] and "Thursday" in seen["recall"]
    assert seen["error"] is True and seen["errorText"].startswith("memory_not_found: ")
