"""Every client's merge, on text only: our entry added after the user's entries (which keep
their order and bytes), a second run changes nothing, --remove gives the original back, a
malformed file is refused with its line, and the result passes the client's documented schema."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from tests.unit.client_schemas import SCHEMAS, claude_hooks
from tinycontext.clients import hooks, plan
from tinycontext.clients.catalog import CLIENTS, Client, Place, Server
from tinycontext.clients.jsontext import ConfigSyntaxError

PLACE = Place(Path("/home/u"), {}, "linux", Path("/work/proj"))
STDIO = Server("/opt/tc/bin/tinycontext", ("mcp",))
HTTP = Server(url="http://127.0.0.1:8000/mcp")
LAUNCHER = "/opt/tc/bin/tinycontext"
EXISTING_JSON = """{
  "theme": "dark",
  "%(key)s": {
    "zeta": {
      "command": "npx",
      "args": ["-y", "zeta-mcp"],
      "env": {"TOKEN": "secret-value"}
    },
    "alpha": {
      "command": "uvx",
      "args": ["alpha"]
    }
  },
  "after": [1, 2, 3]
}
"""
EXISTING_TOML = """# Codex settings
model = "gpt-5"  # default model

[mcp_servers.zeta]
command = "npx"
args = ["-y", "zeta-mcp"]

[mcp_servers.zeta.env]
TOKEN = "secret-value"

[mcp_servers.alpha]
url = "https://alpha.example/mcp"

[profiles.fast]
model = "o4-mini"
"""


def _existing(client: Client) -> str:
    if client.fmt == "toml":
        return EXISTING_TOML
    text = EXISTING_JSON % {"key": client.key}
    if client.name == "vscode":  # VS Code documents `type` as required
        text = text.replace('"command"', '"type": "stdio", "command"')
    if client.name == "copilot":  # and Copilot CLI `type` and `tools`
        text = text.replace('"command"', '"type": "local", "tools": ["*"], "command"')
    return text


def _servers(client: Client, text: str) -> dict[str, object]:
    if client.fmt == "toml":
        return dict(tomllib.loads(text)[client.key])
    from tinycontext.clients.jsontext import parse

    return dict(parse(text, comments=True).plain()[client.key])


def _change(client: Client, text: str | None, server: Server = STDIO,
            remove: bool = False) -> plan.FileChange:
    path = client.paths[client.scopes[0]](PLACE)
    return plan.server_change(client, path, text, server, remove)


ALL = list(CLIENTS.values())
IDS = [c.name for c in ALL]


@pytest.mark.parametrize("client", ALL, ids=IDS)
def test_new_file_holds_our_entry_in_the_documented_shape(client: Client) -> None:
    change = _change(client, None)
    assert change.status == "added" and change.old is None and change.new
    assert SCHEMAS[client.name](change.new) == []
    entry = _servers(client, change.new)["tinycontext"]
    assert isinstance(entry, dict)
    assert entry["command"] == STDIO.command and entry["args"] == ["mcp"]


@pytest.mark.parametrize("client", ALL, ids=IDS)
def test_existing_entries_keep_their_order_and_bytes(client: Client) -> None:
    text = _existing(client)
    change = _change(client, text)
    assert change.status == "added" and change.new is not None
    assert list(_servers(client, change.new)) == ["zeta", "alpha", "tinycontext"]
    assert SCHEMAS[client.name](change.new) == []
    # Only lines were added: every original line is still there, in order.
    new_lines = iter(change.new.splitlines())
    assert all(any(line == n for n in new_lines) for line in text.splitlines())
    if client.fmt != "toml":
        doc = json.loads(change.new)
        assert doc["theme"] == "dark" and doc["after"] == [1, 2, 3]
        assert list(doc) == ["theme", client.key, "after"]


@pytest.mark.parametrize("client", ALL, ids=IDS)
def test_second_run_changes_nothing_and_remove_restores_the_file(client: Client) -> None:
    text = _existing(client)
    first = _change(client, text).new
    again = _change(client, first)
    assert again.status == "unchanged" and not again.changed
    removed = _change(client, first, remove=True)
    assert removed.status == "removed" and removed.new == text
    nothing = _change(client, text, remove=True)
    assert nothing.status == "absent" and not nothing.changed


@pytest.mark.parametrize("client", ALL, ids=IDS)
def test_remove_of_a_file_holding_only_our_entry_deletes_it(client: Client) -> None:
    created = _change(client, None).new
    assert _change(client, created, remove=True).new is None


@pytest.mark.parametrize("client", ALL, ids=IDS)
def test_an_old_entry_is_updated_and_the_users_additions_stay(client: Client) -> None:
    if client.fmt == "toml":
        text = ('[mcp_servers.tinycontext]\ncommand = "/old/tinycontext"\nargs = ["mcp"]\n'
                'startup_timeout_sec = 20\n\n[mcp_servers.tinycontext.env]\n'
                'TINYCONTEXT_MEMORY_DB_PATH = "/data/m.db"\n')
    else:
        text = json.dumps({client.key: {"tinycontext": {
            "command": "/old/tinycontext", "args": ["mcp"],
            "env": {"TINYCONTEXT_MEMORY_DB_PATH": "/data/m.db"}}}}, indent=2)
    change = _change(client, text)
    assert change.status == "updated" and change.new is not None
    entry = _servers(client, change.new)["tinycontext"]
    assert isinstance(entry, dict)
    assert entry["command"] == STDIO.command
    assert entry["env"] == {"TINYCONTEXT_MEMORY_DB_PATH": "/data/m.db"}
    assert SCHEMAS[client.name](change.new) == []


@pytest.mark.parametrize("client", [c for c in ALL if c.http is not None],
                         ids=[c.name for c in ALL if c.http is not None])
def test_http_entries_use_each_clients_own_url_key(client: Client) -> None:
    first = _change(client, _existing(client)).new
    change = _change(client, first, HTTP)
    assert change.status == "updated" and change.new is not None
    assert SCHEMAS[client.name](change.new) == []
    entry = _servers(client, change.new)["tinycontext"]
    assert isinstance(entry, dict) and "command" not in entry and "args" not in entry
    key = {"gemini": "httpUrl", "windsurf": "serverUrl"}.get(client.name, "url")
    assert entry[key] == HTTP.url
    if client.name in ("claude-code", "vscode"):
        assert entry["type"] == "http"


def test_claude_desktop_refuses_http() -> None:
    with pytest.raises(ValueError, match="only stdio"):
        _change(CLIENTS["claude-desktop"], None, HTTP)


@pytest.mark.parametrize("client", ALL, ids=IDS)
def test_a_malformed_file_is_refused_with_its_line(client: Client) -> None:
    bad = ('model = "x"\n[mcp_servers.a]\ncommand = = "y"\n' if client.fmt == "toml"
           else '{\n  "' + client.key + '": {\n    "a": {"command": "x" "args": []}\n  }\n}\n')
    with pytest.raises(ConfigSyntaxError) as caught:
        plan.plan(client, client.scopes[0], PLACE, {client.paths[client.scopes[0]](PLACE): bad},
                  STDIO, LAUNCHER, with_hooks=False)
    assert caught.value.line == 3
    assert caught.value.path == client.paths[client.scopes[0]](PLACE)
    assert str(caught.value.path) in caught.value.located()


def test_a_toml_file_cut_short_says_it_ends_too_early() -> None:
    with pytest.raises(ConfigSyntaxError) as caught:
        _change(CLIENTS["codex"], 'model = "x"\nmcp_servers = [\n')
    assert "end of the file" in caught.value.reason and "\\x00" not in caught.value.reason


def test_jsonc_clients_accept_comments_plain_json_clients_refuse_them() -> None:
    text = '{\n  // mine\n  "mcpServers": {}\n}\n'
    assert _change(CLIENTS["cursor"], text).status == "added"
    with pytest.raises(ConfigSyntaxError, match="comments are not allowed"):
        _change(CLIENTS["claude-code"], text)


def test_claude_code_hooks_merge_beside_the_users_hooks() -> None:
    settings = json.dumps({"model": "opus", "hooks": {
        "SessionStart": [{"matcher": "startup", "hooks": [
            {"type": "command", "command": "echo hello"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint"}]}],
    }}, indent=2) + "\n"
    change = plan.hooks_change(Path("s.json"), settings, LAUNCHER, remove=False)
    assert change.status == "added" and change.new is not None
    assert claude_hooks(change.new) == []
    doc = json.loads(change.new)
    assert list(doc["hooks"]) == ["SessionStart", "PreToolUse", "UserPromptSubmit"]
    assert doc["hooks"]["SessionStart"][0]["hooks"][0]["command"] == "echo hello"
    ours = doc["hooks"]["SessionStart"][1]["hooks"][0]
    assert ours == {"type": "command", "command": f"{LAUNCHER} hook SessionStart",
                    "timeout": hooks.TIMEOUT_SECONDS}
    assert doc["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"].endswith(
        "hook UserPromptSubmit")
    again = plan.hooks_change(Path("s.json"), change.new, LAUNCHER, remove=False)
    assert again.status == "unchanged"
    moved = plan.hooks_change(Path("s.json"), change.new, "/new/bin/tinycontext", remove=False)
    assert moved.status == "updated" and moved.new is not None
    assert moved.new.count("hook SessionStart") == 1 and "/new/bin/tinycontext" in moved.new
    removed = plan.hooks_change(Path("s.json"), change.new, LAUNCHER, remove=True)
    assert removed.status == "removed" and removed.new == settings


def test_hooks_of_others_that_mention_tinycontext_are_not_ours() -> None:
    assert hooks.ours({"type": "command", "command": "/x/tinycontext hook SessionStart"},
                      "SessionStart")
    assert hooks.ours({"type": "command", "command": "'/a b/tinycontext' hook SessionStart"},
                      "SessionStart")
    assert not hooks.ours({"type": "command", "command": "my-tinycontext hook SessionStart"},
                          "SessionStart")
    assert not hooks.ours({"type": "command", "command": "tinycontext hook UserPromptSubmit"},
                          "SessionStart")
    assert not hooks.ours({"type": "command", "command": "tinycontext hook SessionStart | tee"},
                          "SessionStart")


def test_wrongly_shaped_hooks_are_refused() -> None:
    with pytest.raises(ConfigSyntaxError, match='"hooks" should be an object'):
        hooks.install('{\n  "hooks": []\n}', LAUNCHER)
    with pytest.raises(ConfigSyntaxError, match="should be a list"):
        hooks.install('{"hooks": {"SessionStart": {}}}', LAUNCHER)


@pytest.mark.parametrize("system,expected", [
    ("linux", "/home/u/.config/Code/User/mcp.json"),
    ("darwin", "/home/u/Library/Application Support/Code/User/mcp.json"),
    ("windows", "/home/u/AppData/Roaming/Code/User/mcp.json"),
])
def test_user_paths_follow_the_operating_system(system: str, expected: str) -> None:
    place = Place(Path("/home/u"), {}, system, Path("/p"))
    assert CLIENTS["vscode"].paths["user"](place).as_posix() == expected


def test_paths_honour_the_clients_own_variables() -> None:
    place = Place(Path("/home/u"), {"CODEX_HOME": "/c", "CLAUDE_CONFIG_DIR": "/cc",
                                    "XDG_CONFIG_HOME": "/x"}, "linux", Path("/p"))
    assert CLIENTS["codex"].paths["user"](place) == Path("/c/config.toml")
    assert CLIENTS["claude-code"].paths["user"](place) == Path("/cc/.claude.json")
    assert CLIENTS["zed"].paths["user"](place) == Path("/x/zed/settings.json")
    assert CLIENTS["claude-code"].paths["project"](place) == Path("/p/.mcp.json")
    assert plan.config_paths(CLIENTS["claude-code"], "user", place, True)[1] == Path(
        "/cc/settings.json")


@pytest.mark.parametrize("name", ["claude-code", "codex"])
def test_windows_line_ends_are_kept(name: str) -> None:
    client = CLIENTS[name]
    text = _existing(client).replace("\n", "\r\n")
    path = client.paths["user"](PLACE)
    [change] = plan.plan(client, "user", PLACE, {path: text}, STDIO, LAUNCHER, with_hooks=False)
    assert change.old == text and change.new is not None
    assert "\n" not in change.new.replace("\r\n", "")
    [back] = plan.plan(client, "user", PLACE, {path: change.new}, STDIO, LAUNCHER, remove=True,
                       with_hooks=False)
    assert back.new == text


def test_copilot_gets_all_tools_unless_the_user_narrowed_them() -> None:
    client = CLIENTS["copilot"]
    fresh = _change(client, None).new
    assert fresh is not None
    assert json.loads(fresh)["mcpServers"]["tinycontext"] == {
        "type": "stdio", "command": STDIO.command, "args": ["mcp"], "tools": ["*"]}
    narrowed = fresh.replace('"*"', '"recall_memories"')
    assert _change(client, narrowed).status == "unchanged"
    switched = _change(client, narrowed, HTTP).new
    assert switched is not None
    assert json.loads(switched)["mcpServers"]["tinycontext"]["tools"] == ["recall_memories"]


def test_our_hook_inside_a_users_group_is_updated_and_removed_alone() -> None:
    mine = {"type": "command", "command": "echo start"}
    settings = json.dumps({"hooks": {"SessionStart": [{"matcher": "startup", "hooks": [
        mine, {"type": "command", "command": "/old/tinycontext hook SessionStart"}]}]}},
        indent=2)
    installed = hooks.install(settings, LAUNCHER)
    doc = json.loads(installed)
    assert doc["hooks"]["SessionStart"] == [{"matcher": "startup", "hooks": [
        mine, hooks.hook_entry(LAUNCHER, "SessionStart")]}]
    assert list(doc["hooks"]) == ["SessionStart", "UserPromptSubmit"]
    removed = json.loads(hooks.uninstall(installed))
    assert removed == {"hooks": {"SessionStart": [{"matcher": "startup", "hooks": [mine]}]}}


@pytest.mark.parametrize("text", [
    "",
    'model = "o3"\n',
    "# only a comment\n",
    '[mcp_servers]\n\n[mcp_servers.a]\ncommand = "a"\n',
    'mcp_servers = { a = { command = "a" } }\n',
    'mcp_servers.a.command = "a"\n\n[profiles.p]\nmodel = "x"\n',
    '[mcp_servers.a]\ncommand = "a"  # mine\n# trailing comment\n',
    '[profiles.p]\nmodel = "x"\n\n[mcp_servers.a]\nurl = "https://a/mcp"\n\n[tui]\n',
], ids=["empty", "top-level", "comment", "explicit-table", "inline", "dotted", "comments",
        "between-tables"])
def test_codex_layouts(text: str) -> None:
    client = CLIENTS["codex"]
    change = _change(client, text or None)
    assert change.new is not None
    expected = tomllib.loads(text)
    expected.setdefault("mcp_servers", {})["tinycontext"] = {
        "command": STDIO.command, "args": ["mcp"]}
    assert tomllib.loads(change.new) == expected
    assert SCHEMAS["codex"](change.new) == []
    back = _change(client, change.new, remove=True).new
    assert back == (text or None)  # byte for byte (an emptied file is deleted)
