"""What `setup --list` and `doctor` report about the clients, from texts handed in: our entry's
transport and command (a vanished command flagged), hooks, unreadable files with their line;
never another entry's contents."""

from __future__ import annotations

import json
from pathlib import Path

from tinycontext.clients import plan, status
from tinycontext.clients.catalog import CLIENTS, Place, Server

PLACE = Place(Path("/h"), {}, "linux", Path("/p"))
TC = "/opt/tc/bin/tinycontext"


def _files() -> dict[Path, str]:
    claude = CLIENTS["claude-code"]
    files: dict[Path, str] = {}
    for change in plan.plan(claude, "user", PLACE, {}, Server(TC, ("mcp",)), TC):
        assert change.new is not None
        files[change.path] = change.new
    files[Path("/h/.cursor/mcp.json")] = json.dumps({"mcpServers": {
        "secret-one": {"command": "x", "env": {"TOKEN": "tok-123456"}},
        "tinycontext": {"url": "http://127.0.0.1:8000/mcp"}}})
    files[Path("/h/.gemini/settings.json")] = '{\n  "mcpServers": {\n    "a": 1,,\n}'
    files[Path("/p/.vscode/mcp.json")] = '{"servers": {}}'
    return files


def _states(exists: bool = True) -> list[status.State]:
    files = _files()
    return status.survey(PLACE, files.get, lambda path: exists)


def test_each_scope_gets_a_state() -> None:
    states = {(s.client.name, s.scope): s for s in _states()}
    assert len(states) == sum(len(c.scopes) for c in CLIENTS.values())
    claude = states[("claude-code", "user")]
    assert claude.configured and claude.detail == f"stdio {TC} mcp"
    assert claude.hooks == ("SessionStart", "UserPromptSubmit")
    assert states[("cursor", "user")].detail == "http http://127.0.0.1:8000/mcp"
    assert states[("vscode", "project")].state == "not configured"
    assert states[("zed", "user")].state == "no file"
    gemini = states[("gemini", "user")]
    assert gemini.state == "unreadable" and "line 3" in gemini.detail


def test_a_vanished_command_is_flagged() -> None:
    claude = _states(exists=False)[0]
    assert "MISSING" in claude.detail and "setup" in claude.detail


def test_doctor_lines_show_only_ours_and_no_other_entry() -> None:
    lines = "\n".join(status.doctor_lines(_states()))
    assert "Claude Code (user, /h/.claude.json)" in lines
    assert "hooks SessionStart, UserPromptSubmit in /h/.claude/settings.json" in lines
    assert "Cursor (user, /h/.cursor/mcp.json): http" in lines
    assert "Gemini CLI (user): /h/.gemini/settings.json unreadable" in lines
    assert "tok-123456" not in lines and "secret-one" not in lines
    assert "VS Code" not in lines and "Zed" not in lines
    _, data = status.doctor_report(PLACE, _files().get, lambda path: True)
    assert {d["client"] for d in data} == {"claude-code", "cursor", "gemini"}
    assert "tok-123456" not in json.dumps(data)


def test_nothing_configured_says_how_to_start() -> None:
    lines = status.doctor_lines(status.survey(PLACE, lambda path: None, lambda path: True))
    assert lines == ["  none configured: `tinycontext setup claude-code` connects Claude Code "
                     "(`tinycontext setup --list` shows every client)"]


def test_list_lines_name_client_scope_and_file() -> None:
    text = "\n".join(status.line(s) for s in _states())
    assert "claude-code     user     /h/.claude.json" in text
    assert "configured: stdio /opt/tc/bin/tinycontext mcp; hooks SessionStart" in text
    assert "claude-code     project  /p/.mcp.json\n" in text


def test_the_parsers_client_list_matches_the_catalog() -> None:
    from tinycontext.entry import setup_command

    assert tuple(CLIENTS) == setup_command.CLIENT_NAMES
    for client in CLIENTS.values():
        assert f"{client.name} ({', '.join(client.scopes)})" in setup_command.EPILOG


def test_building_the_cli_parser_imports_no_client_module() -> None:
    import subprocess
    import sys

    code = ("import sys\nfrom tinycontext.entry import cli_parser\ncli_parser.build_parser()\n"
            "print(sorted(m for m in sys.modules if m.startswith('tinycontext.clients')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_uvx_command_is_recognised_as_temporary() -> None:
    from tinycontext.entry.setup_command import temporary

    assert temporary("/home/u/.cache/uv/archive-v0/abc123/bin/tinycontext")
    assert not temporary("/home/u/.local/share/uv/tools/tinysuite-context/bin/tinycontext")
    assert not temporary("/home/u/venvs/tc/bin/tinycontext")
