"""The real Codex CLI (npm @openai/codex) with `tinycontext` as its stdio MCP server, offline:
its model is a loopback Responses API stand-in that calls TinyContext's tools.

Codex offers a stdio server's tools only when the server answers `initialize` and
`tools/list` soon after being spawned; this is run idle and beside two CPU-bound processes
(a laptop running a build). Codex is installed once into a cache folder; the test skips, saying
why, where Node.js/npm are missing or npm cannot install it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.agent_clients import npm_install
from tests.e2e.responses_standin import FINAL_TEXT, function_call, responses_stand_in
from tests.e2e.servers import cli_env, run_cli, tinycontext_command

pytestmark = pytest.mark.slow
CODEX_PACKAGE = "@openai/codex@0.171.0"
NAMESPACE = "mcp__tinycontext"
TOOLS = sorted(["delete_memory", "get_memory", "list_memories", "recall_memories",
                "save_memories", "update_memory"])
FACT = "The deploy window of the billing service is Thursday 14:00 UTC."


def npm_cache() -> Path:
    """Where Codex is installed once for every run (NPM_TEST_CACHE, else ~/.cache/...): the
    suite points XDG_CACHE_HOME at a throwaway folder per run."""
    default = Path.home() / ".cache" / "tinycontext-tests" / "npm-codex"
    return Path(os.environ.get("NPM_TEST_CACHE") or default)


def install_codex() -> Path:
    """The `codex` command, installed into the cache folder on first use."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("Node.js and npm are needed for Codex CLI (.ci/run installs them)")
    try:
        return Path(npm_install(npm_cache(), CODEX_PACKAGE, "codex"))
    except RuntimeError as exc:
        pytest.skip(str(exc)[-500:])


@pytest.fixture(scope="module")
def codex() -> Path:
    return install_codex()


def toml_string(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def write_codex_home(home: Path, base_url: str, server_env: dict[str, str]) -> None:
    command, *args = tinycontext_command()
    env = ", ".join(f"{key} = {toml_string(value)}" for key, value in server_env.items())
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        'model = "stand-in-model"\n'
        'model_provider = "standin"\n\n'
        "[model_providers.standin]\n"
        'name = "Loopback stand-in"\n'
        f"base_url = {toml_string(base_url)}\n"
        'wire_api = "responses"\n'
        'env_key = "STANDIN_API_KEY"\n\n'
        "[mcp_servers.tinycontext]\n"
        f"command = {toml_string(command)}\n"
        f"args = {json.dumps(args)}\n"
        f"env = {{ {env} }}\n"
        # `codex exec` never asks; TinyContext's tools run unasked, as a user may allow them.
        'default_tools_approval_mode = "approve"\n',
        encoding="utf-8",
    )


@contextmanager
def busy_processes(count: int) -> Iterator[None]:
    hogs = [subprocess.Popen([sys.executable, "-c", "while True:\n    pass\n"])
            for _ in range(count)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def codex_round_trip(codex: Path, folder: Path) -> dict[str, Any]:
    """One `codex exec`: the stand-in saves a fact through TinyContext, then recalls it."""
    script = [
        function_call("save_memories", {"memories": [{"content": FACT}]}, NAMESPACE,
                      call_id="call_save"),
        function_call("recall_memories", {"query": "When is the billing deploy window?"},
                      NAMESPACE, call_id="call_recall"),
    ]
    with responses_stand_in(script) as stand_in:
        home = folder / "codex-home"
        write_codex_home(home, stand_in.base_url, cli_env(folder))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CODEX_"))}
        env.update(CODEX_HOME=str(home), STANDIN_API_KEY="not-a-real-key")
        done = subprocess.run(
            [str(codex), "exec", "--skip-git-repo-check", "Remember the deploy window."],
            cwd=folder, env=env, capture_output=True, text=True, timeout=300,
            stdin=subprocess.DEVNULL)
        offered = stand_in.tools_offered() if stand_in.requests else {}
        return {"returncode": done.returncode, "stdout": done.stdout, "stderr": done.stderr,
                "offered": offered.get(NAMESPACE), "requests": len(stand_in.requests),
                "saved": stand_in.outputs("call_save"),
                "recalled": stand_in.outputs("call_recall")}


def output_text(output: Any) -> str:
    """A function_call_output's tool text (Codex heads it with the call's wall time)."""
    if not isinstance(output, str):
        output = "".join(part.get("text", "") for part in output if isinstance(part, dict))
    return output.split("Output:\n", 1)[-1]


@pytest.mark.parametrize("busy", [0, 2], ids=["idle", "two-busy-processes"])
def test_codex_offers_the_tools_and_a_call_round_trips(codex: Path, tmp_path: Path,
                                                       busy: int) -> None:
    with busy_processes(busy):
        seen = codex_round_trip(codex, tmp_path)
    assert seen["returncode"] == 0, seen["stderr"][-2000:]
    assert seen["offered"] == TOOLS, f"Codex offered no TinyContext tools: {seen['stderr'][-2000:]}"
    assert seen["requests"] == 3 and FINAL_TEXT in seen["stdout"]
    saved = json.loads(output_text(seen["saved"][0]))
    ref = saved["saved"][0]["ref"]
    recalled = output_text(seen["recalled"][0])
    assert f'ref="{ref}"' in recalled and "Thursday 14:00 UTC" in recalled
    exported = run_cli(tmp_path, "export", "--no-embeddings")  # and it is really stored
    assert [json.loads(line)["content"] for line in exported.stdout.splitlines()] == [FACT]
