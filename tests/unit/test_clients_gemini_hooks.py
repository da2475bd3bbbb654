"""Gemini CLI's hooks (its hooks reference: settings.json `hooks` -> event -> [{matcher?,
sequential?, hooks: [{type: "command", command, name?, timeout (ms)?, description?}]}]) set up
beside its MCP server in the same JSONC file: added, idempotent, the user's own hooks and
comments kept, removed back to the original bytes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tinycontext.clients import plan
from tinycontext.clients.catalog import CLIENTS, Place, Server
from tinycontext.clients.jsontext import parse

PLACE = Place(Path("/home/u"), {}, "linux", Path("/work/proj"))
SERVER = Server("/opt/tc/bin/tinycontext", ("mcp",))
LAUNCHER = "/opt/tc/bin/tinycontext"
GEMINI = CLIENTS["gemini"]
USERS = """{
  // the user's own settings
  "theme": "dark",
  "hooks": {
    "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi"}]}]
  },
}
"""


def setup(text: str | None, remove: bool = False, with_hooks: bool = True) -> plan.FileChange:
    texts: dict[Path, str | None] = {GEMINI.paths["project"](PLACE): text}
    [change] = plan.plan(GEMINI, "project", PLACE, texts, SERVER, LAUNCHER, remove=remove,
                         with_hooks=with_hooks)
    return change


def documented_problems(settings: dict[str, Any]) -> list[str]:
    problems = []
    for event, groups in settings.get("hooks", {}).items():
        for group in groups:
            if set(group) - {"matcher", "sequential", "hooks"}:
                problems.append(f"{event}: unknown group key")
            for hook in group["hooks"]:
                if set(hook) - {"type", "command", "name", "timeout", "description"}:
                    problems.append(f"{event}: unknown hook key")
                if hook["type"] != "command" or not isinstance(hook.get("timeout", 0), int):
                    problems.append(f"{event}: bad hook")
    return problems


def ours(settings: dict[str, Any], event: str) -> list[dict[str, Any]]:
    return [h for g in settings["hooks"].get(event, []) for h in g["hooks"]
            if "tinycontext" in h["command"]]


def test_hooks_are_added_beside_the_server_in_the_documented_shape() -> None:
    change = setup(USERS)
    assert change.status == "added" and change.new is not None
    assert "// the user's own settings" in change.new
    settings = parse(change.new, comments=True).plain()
    assert documented_problems(settings) == []
    assert settings["mcpServers"]["tinycontext"]["command"] == LAUNCHER
    assert ours(settings, "SessionStart") == [{
        "type": "command", "command": f"{LAUNCHER} hook SessionStart", "timeout": 10000,
        "name": "tinycontext"}]
    assert ours(settings, "BeforeAgent")[0]["command"] == f"{LAUNCHER} hook BeforeAgent"
    assert settings["hooks"]["SessionStart"][0]["hooks"][0]["command"] == "echo hi"


def test_second_run_changes_nothing_and_remove_restores_the_bytes() -> None:
    added = setup(USERS).new
    assert setup(added).status == "unchanged"
    removed = setup(added, remove=True)
    assert removed.status == "removed" and removed.new == USERS


def test_no_hooks_and_a_new_file() -> None:
    plain = setup(USERS, with_hooks=False).new
    assert plain is not None and "hook BeforeAgent" not in plain
    fresh = setup(None)
    assert fresh.new is not None and documented_problems(parse(fresh.new).plain()) == []
    assert setup(fresh.new, remove=True).new is None  # nothing of the user's: the file goes


def test_list_shows_gemini_hooks_in_the_same_file() -> None:
    from tinycontext.clients import status

    path = GEMINI.paths["project"](PLACE)
    text = setup(USERS).new
    state = status.one(GEMINI, "project", PLACE, {path: text}.get, lambda p: True)
    assert state.configured and state.hooks == ("SessionStart", "BeforeAgent")
    assert state.hooks_path == path
