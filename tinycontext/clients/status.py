"""Which clients are set up, where, and how (`tinycontext setup --list`, `tinycontext doctor`).
Only file paths, the transport and our own command line are reported: never another entry's
contents, which may hold tokens. Reading is passed in, so this stays testable without disk."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tinycontext.clients import hooks
from tinycontext.clients.catalog import CLIENTS, Client, Place, claude_settings
from tinycontext.clients.jsontext import ConfigSyntaxError
from tinycontext.clients.plan import current_entry


@dataclass(frozen=True)
class State:
    client: Client
    scope: str
    path: Path
    state: str  # configured | not configured | no file | unreadable
    detail: str = ""
    hooks_path: Path | None = None
    hooks: tuple[str, ...] = ()

    @property
    def configured(self) -> bool:
        return self.state == "configured"


def describe(entry: Any, exists: Callable[[Path], bool]) -> str:
    """How our entry launches the server, and whether that command is still there."""
    if not isinstance(entry, dict):
        return "entry is not an object"
    for key in ("url", "httpUrl", "serverUrl"):
        if isinstance(entry.get(key), str):
            return f"http {entry[key]}"
    command = entry.get("command")
    if not isinstance(command, str):
        return "entry has no command"
    args = entry.get("args")
    line = " ".join([command, *map(str, args if isinstance(args, list) else [])])
    if Path(command).is_absolute() and not exists(Path(command)):
        return f"stdio {line} (MISSING: run `tinycontext setup` again)"
    return f"stdio {line}"


def one(client: Client, scope: str, place: Place, read: Callable[[Path], str | None],
        exists: Callable[[Path], bool]) -> State:
    path = client.paths[scope](place)
    hooks_path = claude_settings(scope, place) if client.name == "claude-code" else None
    kind = hooks.CLAUDE
    if client.name == "gemini":  # its hooks live beside its servers, in the same file
        hooks_path, kind = path, hooks.GEMINI
    found: tuple[str, ...] = ()
    if hooks_path is not None:
        try:
            text = read(hooks_path)
            found = tuple(hooks.installed(text, kind)) if text else ()
        except (ConfigSyntaxError, OSError):
            # The servers' own file (Gemini CLI): its state already says it is unreadable.
            found = ("unreadable",) if hooks_path != path else ()
    try:
        text = read(path)
        if text is None:
            return State(client, scope, path, "no file", "", hooks_path, found)
        entry = current_entry(client, text)
    except ConfigSyntaxError as exc:
        return State(client, scope, path, "unreadable", str(exc), hooks_path, found)
    except OSError as exc:
        return State(client, scope, path, "unreadable", str(exc), hooks_path, found)
    if entry is None:
        return State(client, scope, path, "not configured", "", hooks_path, found)
    return State(client, scope, path, "configured", describe(entry, exists), hooks_path, found)


def survey(place: Place, read: Callable[[Path], str | None], exists: Callable[[Path], bool],
           clients: Iterable[Client] | None = None) -> list[State]:
    """Every scope of every client (or of `clients`)."""
    chosen = list(CLIENTS.values()) if clients is None else list(clients)
    return [one(c, scope, place, read, exists) for c in chosen for scope in c.scopes]


def hooks_note(state: State) -> str:
    if state.hooks_path is None:
        return ""
    if state.hooks == ("unreadable",):
        return f"; hooks: {state.hooks_path} unreadable"
    if not state.hooks:
        return "; hooks: not installed"
    return f"; hooks {', '.join(state.hooks)} in {state.hooks_path}"


def line(state: State) -> str:
    """One line of `setup --list`."""
    head = f"{state.client.name:<15} {state.scope:<8} {state.path}"
    if state.configured:
        return f"{head}\n{'':<24} configured: {state.detail}{hooks_note(state)}"
    detail = f" ({state.detail})" if state.detail else ""
    return f"{head}\n{'':<24} {state.state}{detail}{hooks_note(state) if state.hooks else ''}"


def doctor_lines(states: list[State]) -> list[str]:
    """The short doctor section: configured clients only, nothing read from other entries."""
    lines = []
    for s in states:
        if s.configured or s.hooks:
            where = f"{s.client.title} ({s.scope}, {s.path})"
            lines.append(f"  {where}: {s.detail or s.state}{hooks_note(s)}")
        elif s.state == "unreadable":
            lines.append(f"  {s.client.title} ({s.scope}): {s.path} unreadable ({s.detail})")
    return lines or ["  none configured: `tinycontext setup claude-code` connects Claude Code "
                     "(`tinycontext setup --list` shows every client)"]


def doctor_report(place: Place, read: Callable[[Path], str | None],
                  exists: Callable[[Path], bool]) -> tuple[list[str], list[dict[str, Any]]]:
    """Doctor's text lines and JSON entries for the clients set up (or unreadable)."""
    states = survey(place, read, exists)
    shown = [s for s in states if s.configured or s.hooks or s.state == "unreadable"]
    data = [{"client": s.client.name, "scope": s.scope, "path": str(s.path), "state": s.state,
             "server": s.detail if s.configured else None,
             "hooks": list(s.hooks) if s.hooks_path is not None else None,
             "hooks_path": str(s.hooks_path) if s.hooks_path is not None else None}
            for s in shown]
    return doctor_lines(states), data

