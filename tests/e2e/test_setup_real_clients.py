"""The real clients read what `tinycontext setup` wrote: Claude Code (npm
@anthropic-ai/claude-code) lists the server from a project's .mcp.json and from the user's
~/.claude.json, the Codex CLI (npm @openai/codex) from $CODEX_HOME/config.toml, the Gemini CLI
(npm @google/gemini-cli) from ~/.gemini/settings.json, where it also starts our stdio server
and connects to it, and GitHub's Copilot CLI (npm @github/copilot) from
~/.copilot/mcp-config.json and a trusted repository's .github/mcp.json; all offline (listing
servers needs no model account). HOME is a temporary folder, so the user's own settings are
never read or touched. The CLIs are installed with npm into a cache folder shared by runs;
skipped only where npm is missing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.agent_clients import npm_install
from tests.e2e.servers import cli_env, tinycontext_command

pytestmark = pytest.mark.slow
PACKAGES = {"claude": "@anthropic-ai/claude-code@2.1.197", "codex": "@openai/codex@0.171.0",
            "gemini": "@google/gemini-cli@0.61.0", "copilot": "@github/copilot@1.0.102"}
# Shared with the hooks tests: one install serves every run (CLAUDE_CODE_NPM_PREFIX moves it).
NPM_FOLDER = Path(os.environ.get("CLAUDE_CODE_NPM_PREFIX")
                  or Path(tempfile.gettempdir()) / "tinycontext-test-npm")


def _installed(binary: str) -> str:
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip(f"Node.js and npm are needed to install {PACKAGES[binary]}; .ci/run "
                    "installs them")
    return npm_install(NPM_FOLDER, PACKAGES[binary], binary)


@pytest.fixture(scope="module")
def claude() -> str:
    return _installed("claude")


@pytest.fixture(scope="module")
def codex() -> str:
    return _installed("codex")


@pytest.fixture(scope="module")
def gemini() -> str:
    return _installed("gemini")


@pytest.fixture(scope="module")
def copilot() -> str:
    return _installed("copilot")


def _env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = cli_env(tmp_path, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
                  CODEX_HOME=str(home / ".codex"), DISABLE_AUTOUPDATER="1",
                  DISABLE_TELEMETRY="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
    for name in [n for n in env if n.startswith(("ANTHROPIC_", "CLAUDE_", "OPENAI_", "GEMINI_",
                                                  "GOOGLE_", "COPILOT_", "GH_", "GITHUB_"))]:
        del env[name]
    return env


def _run(command: list[str], cwd: Path, env: dict[str, str]) -> str:
    """The command's output (Gemini CLI prints its listing on stderr)."""
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-2000:])
    return done.stdout + done.stderr


def test_claude_code_sees_the_project_server(tmp_path: Path, claude: str) -> None:
    env, project = _env(tmp_path), tmp_path / "project"
    project.mkdir()
    _run([*tinycontext_command(), "setup", "claude-code", "--scope", "project"], project, env)
    shown = _run([claude, "mcp", "get", "tinycontext"], project, env)
    assert "Project config" in shown and "Type: stdio" in shown
    assert f"Command: {tinycontext_command()[0]}" in shown and "Args: mcp" in shown
    # Claude Code itself reads the hooks file we wrote (it rewrites nothing there).
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    assert set(settings["hooks"]) == {"SessionStart", "UserPromptSubmit"}


def test_claude_code_sees_the_user_server_and_its_removal(tmp_path: Path, claude: str) -> None:
    env, elsewhere = _env(tmp_path), tmp_path / "some-repo"
    elsewhere.mkdir()
    # Claude Code's own file with what it keeps there: setup merges beside it.
    claude_json = Path(env["HOME"]) / ".claude.json"
    claude_json.write_text(json.dumps({"numStartups": 4, "mcpServers": {
        "other": {"type": "stdio", "command": "/bin/true", "args": [], "env": {}}}}, indent=2))
    _run([*tinycontext_command(), "setup", "claude-code", "--http",
          "http://127.0.0.1:8765/mcp"], elsewhere, env)
    shown = _run([claude, "mcp", "get", "tinycontext"], elsewhere, env)
    assert "User config" in shown and "http://127.0.0.1:8765/mcp" in shown
    listed = _run([claude, "mcp", "list"], elsewhere, env)
    assert "other:" in listed and "tinycontext:" in listed
    _run([*tinycontext_command(), "setup", "claude-code", "--remove"], elsewhere, env)
    listed = _run([claude, "mcp", "list"], elsewhere, env)
    assert "other:" in listed and "tinycontext" not in listed
    assert json.loads(claude_json.read_text())["numStartups"] >= 4


def _codex_list(codex: str, cwd: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    done = subprocess.run([codex, "mcp", "list", "--json"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    listed: list[dict[str, Any]] = json.loads(done.stdout)
    return listed


def test_codex_lists_the_server_stdio_then_http(tmp_path: Path, codex: str) -> None:
    env = _env(tmp_path)
    config = Path(env["CODEX_HOME"]) / "config.toml"
    config.parent.mkdir()
    config.write_text('# mine\nmodel = "gpt-5"\n\n[mcp_servers.docs]\nurl = '
                      '"https://docs.example/mcp"\n')
    _run([*tinycontext_command(), "setup", "codex"], tmp_path, env)
    servers = {s["name"]: s for s in _codex_list(codex, tmp_path, env)}
    assert set(servers) == {"docs", "tinycontext"}
    transport = servers["tinycontext"]["transport"]
    assert transport["type"] == "stdio" and transport["args"] == ["mcp"]
    assert transport["command"] == tinycontext_command()[0]
    _run([*tinycontext_command(), "setup", "codex", "--http", "http://127.0.0.1:8765/mcp"],
         tmp_path, env)
    servers = {s["name"]: s for s in _codex_list(codex, tmp_path, env)}
    assert servers["tinycontext"]["transport"] == {**servers["tinycontext"]["transport"],
                                                   "type": "streamable_http",
                                                   "url": "http://127.0.0.1:8765/mcp"}
    assert config.read_text().startswith('# mine\nmodel = "gpt-5"\n')


def test_gemini_connects_to_the_stdio_server_and_lists_the_http_one(tmp_path: Path,
                                                                    gemini: str) -> None:
    env, project = _env(tmp_path), tmp_path / "project"
    project.mkdir()
    _run([*tinycontext_command(), "setup", "gemini"], project, env)
    # `gemini mcp list` gives a server 5 s to connect unless the entry has a `timeout` (ms);
    # a loaded CI machine can need more to start Python. A user's own key like this one is
    # kept when setup runs again.
    settings = Path(env["HOME"]) / ".gemini" / "settings.json"
    written = json.loads(settings.read_text())
    written["mcpServers"]["tinycontext"]["timeout"] = 60000
    settings.write_text(json.dumps(written, indent=2))
    assert "already configured" in _run([*tinycontext_command(), "setup", "gemini"], project, env)
    # Gemini CLI starts servers only in folders the user trusts (its trustedFolders.json).
    trusted = Path(env["HOME"]) / ".gemini" / "trustedFolders.json"
    trusted.write_text(json.dumps({str(project): "TRUST_FOLDER"}))
    listed = _run([gemini, "mcp", "list"], project, env)
    assert f"tinycontext: {tinycontext_command()[0]} mcp (stdio) - Connected" in listed
    _run([*tinycontext_command(), "setup", "gemini", "--scope", "project", "--http",
          "http://127.0.0.1:9/mcp"], project, env)
    listed = _run([gemini, "mcp", "list"], project, env)
    assert "tinycontext: http://127.0.0.1:9/mcp (http)" in listed


def test_copilot_lists_the_user_and_the_workspace_server(tmp_path: Path, copilot: str) -> None:
    env, project = _env(tmp_path), tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=60)
    _run([*tinycontext_command(), "setup", "copilot"], project, env)
    shown = _run([copilot, "mcp", "get", "tinycontext"], project, env)
    assert f"Command: {tinycontext_command()[0]} mcp" in shown and "Source: User" in shown
    assert "Tools: * (all)" in shown
    _run([*tinycontext_command(), "setup", "copilot", "--scope", "project", "--http",
          "http://127.0.0.1:9/mcp"], project, env)
    # Copilot CLI reads a workspace's servers only in folders the user trusts.
    (Path(env["HOME"]) / ".copilot" / "config.json").write_text(
        json.dumps({"trusted_folders": [str(project)]}))
    listed = json.loads(subprocess.run([copilot, "mcp", "list", "--json"], cwd=project, env=env,
                                       capture_output=True, text=True, timeout=120).stdout)
    assert listed["mcpServers"]["tinycontext"]["url"] == "http://127.0.0.1:9/mcp"
    _run([*tinycontext_command(), "setup", "copilot", "--scope", "project", "--remove"],
         project, env)
    listed = json.loads(subprocess.run([copilot, "mcp", "list", "--json"], cwd=project, env=env,
                                       capture_output=True, text=True, timeout=120).stdout)
    assert listed["mcpServers"]["tinycontext"]["source"] == "user"
