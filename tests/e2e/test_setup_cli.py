"""`tinycontext setup` as a subprocess, the way a person runs it, with HOME, XDG_CONFIG_HOME and
CODEX_HOME pointed at temporary folders: every client configured, listed, run again (nothing
changes), removed (the user's own entries back as they were), and the written files checked
against each client's documented schema."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.e2e.servers import cli_env, tinycontext_command
from tests.unit.client_schemas import SCHEMAS, claude_hooks
from tinycontext.clients.catalog import CLIENTS, Place

pytestmark = pytest.mark.slow


def _env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = cli_env(tmp_path, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
                  CODEX_HOME=str(home / "codex-home"))
    env.pop("CLAUDE_CONFIG_DIR", None)
    return env


def _setup(tmp_path: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*tinycontext_command(), "setup", *args], cwd=cwd, text=True,
                          capture_output=True, env=_env(tmp_path), timeout=60)


def _place(tmp_path: Path, cwd: Path) -> Place:
    env = _env(tmp_path)
    return Place(Path(env["HOME"]), env, "linux", cwd)


def test_every_client_round_trip(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    place = _place(tmp_path, project)
    zed = CLIENTS["zed"].paths["user"](place)
    zed.parent.mkdir(parents=True)
    zed_text = '// Zed settings\n{\n  "theme": "One Dark", // mine\n}\n'
    zed.write_text(zed_text)
    for client in CLIENTS.values():
        for scope in client.scopes:
            done = _setup(tmp_path, project, client.name, "--scope", scope)
            assert done.returncode == 0, done.stderr
            path = client.paths[scope](place)
            assert f"added {client.title} MCP server" in done.stdout and str(path) in done.stdout
            assert SCHEMAS[client.name](path.read_text()) == [], path
    assert "// mine" in zed.read_text()
    assert claude_hooks((project / ".claude" / "settings.json").read_text()) == []
    user_settings = Path(place.home) / ".claude" / "settings.json"
    assert claude_hooks(user_settings.read_text()) == []
    hook = json.loads(user_settings.read_text())["hooks"]["UserPromptSubmit"][0]["hooks"][0]
    assert hook["command"] == f"{tinycontext_command()[0]} hook UserPromptSubmit"
    assert Path(tinycontext_command()[0]).is_absolute()

    listed = _setup(tmp_path, project, "--list")
    assert listed.returncode == 0
    assert listed.stdout.count("configured: stdio") == sum(len(c.scopes) for c in CLIENTS.values())

    again = _setup(tmp_path, project, "codex")
    assert again.returncode == 0 and "already configured" in again.stdout

    for client in CLIENTS.values():
        for scope in client.scopes:
            done = _setup(tmp_path, project, client.name, "--scope", scope, "--remove")
            assert done.returncode == 0, done.stderr
            assert f"removed {client.title} MCP server" in done.stdout
    assert zed.read_text() == zed_text
    assert not (project / ".mcp.json").exists() and not user_settings.exists()


def test_help_names_every_client_and_option(tmp_path: Path) -> None:
    done = _setup(tmp_path, tmp_path, "--help")
    assert done.returncode == 0
    for word in [*CLIENTS, "--scope", "--http", "--remove", "--dry-run", "--list", "--no-hooks"]:
        assert word in done.stdout
    top = subprocess.run([*tinycontext_command(), "--help"], capture_output=True, text=True,
                         env=_env(tmp_path), timeout=60)
    assert "setup" in top.stdout


def test_malformed_config_exits_2_and_stays(tmp_path: Path) -> None:
    codex = Path(_env(tmp_path)["CODEX_HOME"]) / "config.toml"
    codex.parent.mkdir()
    codex.write_text('model = "gpt-5"\n[mcp_servers.x\ncommand = "y"\n')
    done = _setup(tmp_path, tmp_path, "codex")
    assert done.returncode == 2 and f"{codex}: line 2" in done.stderr
    assert codex.read_text() == 'model = "gpt-5"\n[mcp_servers.x\ncommand = "y"\n'


def test_doctor_reports_the_clients_set_up(tmp_path: Path) -> None:
    assert _setup(tmp_path, tmp_path, "claude-code").returncode == 0
    doctor = subprocess.run([*tinycontext_command(), "doctor"], capture_output=True, text=True,
                            env=_env(tmp_path), cwd=tmp_path, timeout=180)
    section = doctor.stdout.split("Agent clients (tinycontext setup):\n")[1]
    assert "Claude Code (user, " in section
    assert "hooks SessionStart, UserPromptSubmit in " in section
    data = json.loads(subprocess.run([*tinycontext_command(), "doctor", "--json"],
                                     capture_output=True, text=True, env=_env(tmp_path),
                                     cwd=tmp_path, timeout=180).stdout)
    [claude] = data["clients"]
    assert claude["client"] == "claude-code" and claude["state"] == "configured"
    assert claude["hooks"] == ["SessionStart", "UserPromptSubmit"]
