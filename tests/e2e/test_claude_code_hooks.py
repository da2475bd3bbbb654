"""The real Claude Code CLI (npm @anthropic-ai/claude-code) with TinyContext's hooks and MCP
server, offline against a loopback stand-in model that records what the model is sent.

The project is configured by `tinycontext setup claude-code --scope project`. A prompt
matching a stored memory sends that memory to the model without any tool call; an
unrelated prompt sends none; "remember that ..." is in the store afterwards; with
ENABLE_TOOL_SEARCH=false the MCP tools are listed and a tool_use the stand-in returns runs.
HOME is a temporary folder: the user's own Claude Code and TinyContext settings are never read
or touched. Skipped only where npm is missing; the CLI is installed into a cache folder.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.agent_clients import MEMORY, configured_project, npm_client, save, stored
from tests.e2e.standin_model import StandIn, say, standin_model

pytestmark = pytest.mark.slow
CLAUDE_PACKAGE = "@anthropic-ai/claude-code@2.1.197"


@pytest.fixture(scope="module")
def claude() -> str:
    return npm_client(CLAUDE_PACKAGE, "claude", "CLAUDE_CODE_NPM_PREFIX", "tinycontext-test-npm")


@pytest.fixture
def project(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    """A project set up as a new user would (.mcp.json and the hooks in .claude/settings.json
    written by setup), and the environment Claude Code runs in."""
    with configured_project(
            tmp_path, "claude-code", ("ANTHROPIC_BASE", "CLAUDE_CONFIG"),
            ANTHROPIC_API_KEY="sk-ant-standin-key", DISABLE_AUTOUPDATER="1",
            DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1") as (folder, env):
        hooks = json.loads((folder / ".claude" / "settings.json").read_text())["hooks"]
        assert set(hooks) == {"SessionStart", "UserPromptSubmit"}
        yield folder, env


def ask(claude: str, folder: Path, env: dict[str, str], standin: StandIn, base: str,
        prompt: str, *options: str) -> tuple[str, str]:
    """Run `claude -p`; return (its answer, everything the model was sent as JSON text)."""
    done = subprocess.run([claude, "-p", prompt, *options], cwd=folder,
                          env=dict(env, ANTHROPIC_BASE_URL=base), capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-1000:] + done.stderr[-2000:]
    return done.stdout, json.dumps(standin.messages())


def used_tools(sent: str) -> bool:
    return '"tool_use"' in sent or '"tool_result"' in sent


def test_a_matching_prompt_sends_the_memory_without_a_tool_call(
        claude: str, project: tuple[Path, dict[str, str]]) -> None:
    folder, env = project
    save(env, MEMORY)
    with standin_model(say("It listens on 5433.")) as (base, standin):
        answer, sent = ask(claude, folder, env, standin, base,
                           "Which port does the billing staging database listen on?")
    assert "5433" in answer
    assert "port 5433" in sent and "<recalled_memories current_time" in sent
    assert not used_tools(sent)


def test_an_unrelated_prompt_sends_no_memory(claude: str,
                                             project: tuple[Path, dict[str, str]]) -> None:
    folder, env = project
    save(env, MEMORY)
    with standin_model(say("Done.")) as (base, standin):
        _, sent = ask(claude, folder, env, standin, base, "run the tests")
    # The recall tool's description names the frame (<recalled_memories>) once the MCP tools
    # reach the first request; an injected block carries its attributes.
    assert standin.messages() and "5433" not in sent
    assert "<recalled_memories current_time" not in sent.replace("\\u003c", "<")


def test_remember_that_is_stored(claude: str, project: tuple[Path, dict[str, str]]) -> None:
    folder, env = project
    with standin_model(say("Noted.")) as (base, standin):
        ask(claude, folder, env, standin, base,
            "Remember that the release branch is cut every second Thursday.")
    assert stored(env) == ["The release branch is cut every second Thursday."]


def test_mcp_tools_are_listed_and_a_tool_use_runs(claude: str,
                                                  project: tuple[Path, dict[str, str]]) -> None:
    folder, env = project
    save(env, MEMORY)
    tool = "mcp__tinycontext__recall_memories"

    def script(body: dict[str, Any]) -> dict[str, Any]:
        answered = "tool_result" in json.dumps(body.get("messages", []))
        offered = any(t.get("name") == tool for t in body.get("tools", []))
        if offered and not answered:
            return {"tool": tool, "input": {"query": "staging database port"}}
        return {"text": "Recalled."}

    with standin_model(script) as (base, standin):
        # The .mcp.json setup wrote, passed explicitly: a project's own servers wait for a
        # person's approval. --mcp-config servers connect in the background unless told to wait;
        # the longer connect and start-up limits are for a machine busy with other tests.
        ask(claude, folder,
            dict(env, ENABLE_TOOL_SEARCH="false", MCP_CONNECTION_NONBLOCKING="false",
                 MCP_CONNECT_TIMEOUT_MS="60000", MCP_TIMEOUT="120000"),
            standin, base, "Look up the staging database in your memory tool.",
            "--mcp-config", str(folder / ".mcp.json"), "--allowedTools", tool)
    first = standin.messages()[0]
    names = {t.get("name") for t in first.get("tools", [])}
    assert {f"mcp__tinycontext__{n}" for n in ("save_memories", "recall_memories",
                                               "list_memories")} <= names
    results = [block for body in standin.messages() for message in body["messages"]
               if isinstance(message.get("content"), list)
               for block in message["content"] if block.get("type") == "tool_result"]
    assert results and "port 5433" in json.dumps(results)
