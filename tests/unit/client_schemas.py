"""Each client's documented config schema as a small check (docs/guides/clients.md cites the docs):
what a file written by `tinycontext setup` must satisfy for the client to read our server.
Each check returns the list of problems found (empty: valid)."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable
from typing import Any

from tinycontext.clients.jsontext import parse


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _string_map(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


def _servers(doc: Any, key: str, problems: list[str]) -> dict[str, Any]:
    if not isinstance(doc, dict):
        problems.append("the document is not an object")
        return {}
    servers = doc.get(key, {})
    if not isinstance(servers, dict):
        problems.append(f"{key} is not an object")
        return {}
    return servers


def _entry(name: str, entry: Any, allowed: set[str], url_keys: tuple[str, ...],
           problems: list[str], typed: bool = False) -> None:
    """The common shape: a stdio `command` (+ `args`, `env`) or one URL key."""
    if not isinstance(entry, dict):
        problems.append(f"{name}: not an object")
        return
    unknown = set(entry) - allowed
    if unknown:
        problems.append(f"{name}: keys the client does not document: {sorted(unknown)}")
    urls = [k for k in url_keys if k in entry]
    if "command" in entry:
        if not isinstance(entry["command"], str) or not entry["command"]:
            problems.append(f"{name}: command must be a non-empty string")
        if "args" in entry and not _strings(entry["args"]):
            problems.append(f"{name}: args must be a list of strings")
        if urls:
            problems.append(f"{name}: both a command and {urls}")
        if typed and entry.get("type", "stdio") != "stdio":
            problems.append(f"{name}: a command server has type stdio")
    elif len(urls) == 1:
        if not isinstance(entry[urls[0]], str) or "://" not in entry[urls[0]]:
            problems.append(f"{name}: {urls[0]} must be a URL")
        if typed and entry.get("type") not in ("http", "sse", None):
            problems.append(f"{name}: a URL server has type http or sse")
    else:
        problems.append(f"{name}: needs a command or exactly one of {url_keys}")
    if "env" in entry and not _string_map(entry["env"]):
        problems.append(f"{name}: env must map names to strings")


def _json_check(key: str, allowed: set[str], url_keys: tuple[str, ...], comments: bool,
                typed: bool = False, require_type: bool = False) -> Callable[[str], list[str]]:
    def check(text: str) -> list[str]:
        problems: list[str] = []
        doc = parse(text, comments).plain() if comments else json.loads(text)
        for name, entry in _servers(doc, key, problems).items():
            _entry(name, entry, allowed, url_keys, problems, typed)
            if require_type and isinstance(entry, dict) and "type" not in entry:
                problems.append(f"{name}: type is required")
        return problems
    return check


def codex(text: str) -> list[str]:
    """config.md: [mcp_servers.NAME] with command/args/env/env_vars/cwd or url + options."""
    problems: list[str] = []
    allowed = {"command", "args", "env", "env_vars", "cwd", "url", "bearer_token_env_var",
               "http_headers", "env_http_headers", "startup_timeout_sec", "tool_timeout_sec",
               "enabled", "enabled_tools", "disabled_tools"}
    for name, entry in _servers(tomllib.loads(text), "mcp_servers", problems).items():
        _entry(name, entry, allowed, ("url",), problems)
    return problems


def claude_hooks(text: str) -> list[str]:
    """Claude Code's settings schema: hooks -> event -> [{matcher?, hooks: [command hook]}]."""
    problems: list[str] = []
    hooks = json.loads(text).get("hooks", {})
    if not isinstance(hooks, dict):
        return ["hooks is not an object"]
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            problems.append(f"{event}: not a list")
            continue
        for group in groups:
            if not isinstance(group, dict) or set(group) - {"matcher", "hooks"}:
                problems.append(f"{event}: a group has keys beyond matcher and hooks")
                continue
            if "matcher" in group and not isinstance(group["matcher"], str):
                problems.append(f"{event}: matcher must be a string")
            for hook in group.get("hooks", []):
                if hook.get("type") != "command" or not hook.get("command"):
                    problems.append(f"{event}: a command hook needs type and command")
                allowed = {"type", "command", "timeout", "async", "shell", "statusMessage",
                           "if", "args", "asyncRewake"}
                if set(hook) - allowed:
                    problems.append(f"{event}: unknown hook keys {sorted(set(hook) - allowed)}")
                timeout = hook.get("timeout", 1)
                if not isinstance(timeout, int | float) or timeout <= 0:
                    problems.append(f"{event}: timeout must be a positive number of seconds")
    return problems


def _copilot(text: str) -> list[str]:
    problems: list[str] = []
    allowed = {"type", "command", "args", "env", "cwd", "url", "headers", "tools", "timeout"}
    for name, entry in _servers(json.loads(text), "mcpServers", problems).items():
        _entry(name, entry, allowed, ("url",), problems)
        if not isinstance(entry, dict):
            continue
        kind = entry.get("type")
        if kind not in ("local", "stdio", "http", "sse"):
            problems.append(f"{name}: type must be local, stdio, http or sse, not {kind!r}")
        if ("command" in entry) != (kind in ("local", "stdio")):
            problems.append(f"{name}: type {kind!r} does not match its command/url")
        if not _strings(entry.get("tools")):
            problems.append(f"{name}: tools (a list of names or [\"*\"]) is required")
    return problems


SCHEMAS: dict[str, Callable[[str], list[str]]] = {
    # code.claude.com/docs/en/mcp: stdio {type?, command, args?, env?}; http {type, url, headers?}
    "claude-code": _json_check("mcpServers", {"type", "command", "args", "env", "url",
                                              "headers", "oauth"}, ("url",), False, typed=True),
    # modelcontextprotocol.io quickstart: {command, args?, env?}; no URL servers in the file
    "claude-desktop": _json_check("mcpServers", {"command", "args", "env"}, (), False),
    # cursor.com/docs/context/mcp: {command, args?, env?, envFile?} or {url, headers?}
    "cursor": _json_check("mcpServers", {"type", "command", "args", "env", "envFile", "url",
                                         "headers", "auth"}, ("url",), True),
    # VS Code mcp-configuration: `servers`; type required; stdio command/args/env/envFile,
    # http/sse url/headers
    "vscode": _json_check("servers", {"type", "command", "args", "env", "envFile", "url",
                                      "headers", "dev"}, ("url",), True, typed=True,
                          require_type=True),
    "codex": codex,
    # docs.github.com Copilot CLI add-mcp-servers: type local|stdio (command, args, env, cwd)
    # or http|sse (url, headers); `tools` (names or "*") required
    "copilot": _copilot,
    # gemini-cli's tools/mcp-server.md: command/args/env/cwd, url (SSE) or httpUrl
    "gemini": _json_check("mcpServers", {"command", "args", "env", "cwd", "url", "httpUrl",
                                         "headers", "timeout", "trust", "includeTools",
                                         "excludeTools", "description", "oauth"},
                          ("url", "httpUrl"), True),
    # lmstudio.ai/docs/app/mcp: Cursor's notation
    "lmstudio": _json_check("mcpServers", {"command", "args", "env", "url", "headers"},
                            ("url",), False),
    # docs.windsurf.com cascade/mcp: command/args/env or serverUrl/url + headers
    "windsurf": _json_check("mcpServers", {"command", "args", "env", "serverUrl", "url",
                                           "headers", "disabled", "disabledTools"},
                            ("serverUrl", "url"), False),
    # zed.dev/docs/ai/mcp: context_servers {command, args, env} or {url, headers}
    "zed": _json_check("context_servers", {"command", "args", "env", "url", "headers",
                                           "enabled", "source", "settings"}, ("url",), True),
}
