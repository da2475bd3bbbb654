"""The agent clients `tinycontext setup` knows: where each keeps its MCP servers (per scope and
operating system), in which format and under which key, and the entry it expects. Pure: the
home folder, environment, system and current folder come in as a Place.

Sources (docs/guides/clients.md cites each): Claude Code's MCP and hooks docs, the MCP
quickstart for Claude Desktop, Cursor's, VS Code's, Codex's (config.md), Gemini CLI's,
LM Studio's, Windsurf's and Zed's MCP pages."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any

SERVER_NAME = "tinycontext"
# Keys that say how a client reaches a server. Switching between stdio and HTTP drops the other
# transport's keys; every other key of an existing entry (env, timeouts, ...) is the user's.
TRANSPORT_KEYS = ("type", "command", "args", "url", "httpUrl", "serverUrl")


@dataclass(frozen=True)
class Place:
    """Where paths resolve: home folder, environment, 'linux' | 'darwin' | 'windows', cwd."""

    home: Path
    env: Mapping[str, str]
    system: str
    cwd: Path

    def xdg_config(self) -> Path:
        named = self.env.get("XDG_CONFIG_HOME", "")
        return Path(named) if named and PurePath(named).is_absolute() else self.home / ".config"

    def appdata(self) -> Path:
        named = self.env.get("APPDATA", "")
        return Path(named) if named else self.home / "AppData" / "Roaming"

    def app_support(self, name: str) -> Path:
        """An Electron app's per-user folder (VS Code, Claude Desktop) on this system."""
        if self.system == "darwin":
            return self.home / "Library" / "Application Support" / name
        if self.system == "windows":
            return self.appdata() / name
        return self.xdg_config() / name


@dataclass(frozen=True)
class Server:
    """What the entry launches: a stdio command, or the URL of a running `tinycontext serve`."""

    command: str = ""
    args: tuple[str, ...] = ()
    url: str = ""

    @property
    def http(self) -> bool:
        return bool(self.url)


@dataclass(frozen=True)
class Client:
    name: str  # the command-line name
    title: str
    fmt: str  # "json", "jsonc" (comments and trailing commas allowed) or "toml"
    key: str  # the object holding the servers
    paths: Mapping[str, Callable[[Place], Path]]  # scope -> config file; first is the default
    stdio: Callable[[Server], dict[str, Any]]
    http: Callable[[Server], dict[str, Any]] | None
    doc: str
    defaults: Mapping[str, Any] = field(default_factory=dict)  # set only when absent


    @property
    def scopes(self) -> tuple[str, ...]:
        return tuple(self.paths)

    def entry(self, server: Server) -> dict[str, Any]:
        if server.http:
            if self.http is None:
                raise ValueError(f"{self.title} reads only stdio servers from its config file; "
                                 "run setup without --http")
            return self.http(server)
        return self.stdio(server)


def _plain(server: Server) -> dict[str, Any]:
    return {"command": server.command, "args": list(server.args)}


def _typed(server: Server) -> dict[str, Any]:
    return {"type": "stdio", "command": server.command, "args": list(server.args)}


def _url(key: str, typed: bool = False) -> Callable[[Server], dict[str, Any]]:
    return lambda server: {**({"type": "http"} if typed else {}), key: server.url}


def claude_user_dir(place: Place) -> Path:
    """~/.claude, or CLAUDE_CONFIG_DIR, which moves both settings.json and .claude.json."""
    named = place.env.get("CLAUDE_CONFIG_DIR", "")
    return Path(named) if named else place.home / ".claude"


def _claude_json(place: Place) -> Path:
    named = place.env.get("CLAUDE_CONFIG_DIR", "")
    return Path(named) / ".claude.json" if named else place.home / ".claude.json"


def claude_settings(scope: str, place: Place) -> Path:
    """Where Claude Code's hooks go for a scope."""
    if scope == "project":
        return place.cwd / ".claude" / "settings.json"
    return claude_user_dir(place) / "settings.json"


def _copilot_home(place: Place) -> Path:
    named = place.env.get("COPILOT_HOME", "")
    return Path(named) if named else place.home / ".copilot"


def _codex_home(place: Place) -> Path:
    named = place.env.get("CODEX_HOME", "")
    return Path(named) if named else place.home / ".codex"


def _zed_user(place: Place) -> Path:
    if place.system == "windows":
        return place.appdata() / "Zed" / "settings.json"
    return place.xdg_config() / "zed" / "settings.json"


CLIENTS: dict[str, Client] = {c.name: c for c in (
    Client("claude-code", "Claude Code", "json", "mcpServers",
           {"user": _claude_json, "project": lambda p: p.cwd / ".mcp.json"},
           _typed, _url("url", typed=True), "https://code.claude.com/docs/en/mcp"),
    Client("claude-desktop", "Claude Desktop", "json", "mcpServers",
           {"user": lambda p: p.app_support("Claude") / "claude_desktop_config.json"},
           _plain, None, "https://modelcontextprotocol.io/quickstart/user"),
    Client("cursor", "Cursor", "jsonc", "mcpServers",
           {"user": lambda p: p.home / ".cursor" / "mcp.json",
            "project": lambda p: p.cwd / ".cursor" / "mcp.json"},
           _plain, _url("url"), "https://cursor.com/docs/context/mcp"),
    Client("vscode", "VS Code", "jsonc", "servers",
           {"user": lambda p: p.app_support("Code") / "User" / "mcp.json",
            "project": lambda p: p.cwd / ".vscode" / "mcp.json"},
           _typed, _url("url", typed=True),
           "https://code.visualstudio.com/docs/copilot/reference/mcp-configuration"),
    Client("codex", "Codex CLI", "toml", "mcp_servers",
           {"user": lambda p: _codex_home(p) / "config.toml",
            "project": lambda p: p.cwd / ".codex" / "config.toml"},
           _plain, _url("url"), "https://github.com/openai/codex/blob/main/docs/config.md"),
    # Its project file could also be .mcp.json, Claude Code's: .github/mcp.json keeps them apart.
    Client("copilot", "GitHub Copilot CLI", "json", "mcpServers",
           {"user": lambda p: _copilot_home(p) / "mcp-config.json",
            "project": lambda p: p.cwd / ".github" / "mcp.json"},
           _typed, _url("url", typed=True),
           "https://docs.github.com/en/copilot/how-tos/copilot-cli/customize-copilot/"
           "add-mcp-servers", defaults={"tools": ["*"]}),
    Client("gemini", "Gemini CLI", "jsonc", "mcpServers",
           {"user": lambda p: p.home / ".gemini" / "settings.json",
            "project": lambda p: p.cwd / ".gemini" / "settings.json"},
           _plain, _url("httpUrl"),
           "https://github.com/google-gemini/gemini-cli/blob/main/docs/tools/mcp-server.md"),
    Client("lmstudio", "LM Studio", "json", "mcpServers",
           {"user": lambda p: p.home / ".lmstudio" / "mcp.json"},
           _plain, _url("url"), "https://lmstudio.ai/docs/app/mcp"),
    Client("windsurf", "Windsurf", "json", "mcpServers",
           {"user": lambda p: p.home / ".codeium" / "windsurf" / "mcp_config.json"},
           _plain, _url("serverUrl"), "https://docs.windsurf.com/windsurf/cascade/mcp"),
    Client("zed", "Zed", "jsonc", "context_servers",
           {"user": _zed_user, "project": lambda p: p.cwd / ".zed" / "settings.json"},
           _plain, _url("url"), "https://zed.dev/docs/ai/mcp"),
)}
ALIASES = {"claude": "claude-code", "code": "vscode", "vs-code": "vscode", "gemini-cli": "gemini",
           "codex-cli": "codex", "lm-studio": "lmstudio", "copilot-cli": "copilot",
           "github-copilot": "copilot"}


def find(name: str) -> Client | None:
    key = name.strip().lower()
    return CLIENTS.get(ALIASES.get(key, key))
