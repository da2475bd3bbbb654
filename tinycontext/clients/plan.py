"""What `tinycontext setup` would change: for a client and scope, the new text of each config
file (or None: the file goes), from the files' current texts. Pure: texts in, changes out; the
command reads and writes the files (tinycontext.clients.files)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tinycontext.clients import hooks, jsonmerge, tomlmerge
from tinycontext.clients.catalog import SERVER_NAME, Client, Place, Server, claude_settings
from tinycontext.clients.jsontext import ConfigSyntaxError


@dataclass(frozen=True)
class FileChange:
    path: Path
    old: str | None  # None: the file does not exist
    new: str | None  # None: the file is (or stays) absent
    what: str
    status: str  # added | updated | unchanged | removed | absent

    @property
    def changed(self) -> bool:
        return self.old != self.new


def describe_server(server: Server) -> str:
    if server.http:
        return f"http {server.url}"
    return "stdio " + " ".join([server.command, *server.args])


def config_paths(client: Client, scope: str, place: Place, with_hooks: bool) -> list[Path]:
    """The files a setup of `client` in `scope` reads and may write, in that order."""
    paths = [client.paths[scope](place)]
    if with_hooks and client.name == "claude-code":
        paths.append(claude_settings(scope, place))
    return paths


def current_entry(client: Client, text: str | None) -> Any:
    """Our entry as the client would read it, None when absent. Raises ConfigSyntaxError."""
    if not text:
        return None
    if client.fmt == "toml":
        return tomlmerge.lookup(text, client.key, SERVER_NAME)
    return jsonmerge.lookup(text, (client.key, SERVER_NAME), client.fmt == "jsonc")


def _emptied(client: Client, text: str) -> bool:
    if client.fmt == "toml":
        return text.strip() == ""
    return jsonmerge.is_empty_document(text, client.fmt == "jsonc")


def server_change(client: Client, path: Path, text: str | None, server: Server,
                  remove: bool) -> FileChange:
    what = f'{client.title} MCP server "{SERVER_NAME}"'
    if not remove:
        what += f" ({describe_server(server)})"
    existing = current_entry(client, text)
    comments = client.fmt == "jsonc"
    if remove:
        if existing is None or text is None:
            return FileChange(path, text, text, what, "absent")
        if client.fmt == "toml":
            new: str | None = tomlmerge.delete(text, client.key, SERVER_NAME)
        else:
            new = jsonmerge.delete(text, (client.key, SERVER_NAME), comments, prune=1)
        return FileChange(path, text, None if new is None or _emptied(client, new) else new,
                          what, "removed")
    wanted = jsonmerge.merged_entry(existing, client.entry(server), client.defaults)
    if existing == wanted:
        return FileChange(path, text, text, what, "unchanged")
    if client.fmt == "toml":
        new = tomlmerge.set_entry(text or "", client.key, SERVER_NAME, wanted)
    else:
        new = jsonmerge.set_value(text or "", (client.key, SERVER_NAME), wanted, comments)
    return FileChange(path, text, new, what, "added" if existing is None else "updated")


# Clients whose hooks live in the same file as their MCP servers (one change for both).
SAME_FILE_HOOKS = {"gemini": hooks.GEMINI}


def hooks_change(path: Path, text: str | None, launcher: str, remove: bool,
                 kind: hooks.HookSet = hooks.CLAUDE) -> FileChange:
    what = f"{kind.title} hooks " + " and ".join(kind.events)
    if not remove:
        what += f" ({hooks.hook_command(launcher, '<Event>')})"
    before = hooks.installed(text, kind) if text else []
    if remove:
        if not before or text is None:
            return FileChange(path, text, text, what, "absent")
        new = hooks.uninstall(text, kind)
        empty = jsonmerge.is_empty_document(new, kind.comments)
        return FileChange(path, text, None if empty else new, what, "removed")
    new = hooks.install(text or "", launcher, kind)
    if text is not None and new == text:
        return FileChange(path, text, text, what, "unchanged")
    return FileChange(path, text, new, what, "updated" if before else "added")


def _with_hooks(client: Client, path: Path, text: str | None, server: Server, launcher: str,
                remove: bool, kind: hooks.HookSet) -> FileChange:
    """The server entry and the hooks of a client that keeps both in one file."""
    if remove:
        first = hooks_change(path, text, launcher, True, kind)
        rest = text if first.status == "absent" else first.new
        second = server_change(client, path, rest, server, True)
        new = second.new if second.status == "removed" else rest
        gone = "removed" in (first.status, second.status)
        return FileChange(path, text, new, f"{second.what} and {first.what}",
                          "removed" if gone else "absent")
    first = server_change(client, path, text, server, False)
    second = hooks_change(path, first.new, launcher, False, kind)
    status = "unchanged" if second.new == text else (
        "added" if first.status == "added" else "updated")
    return FileChange(path, text, second.new, f"{first.what} and {second.what}", status)


def _newlines(change: FileChange, original: str | None) -> FileChange:
    """Back to the file's own line ends (edits are made on LF text)."""
    if original is None or "\r\n" not in original:
        return change
    new = original if not change.changed else (
        None if change.new is None else change.new.replace("\n", "\r\n"))
    return FileChange(change.path, original, new, change.what, change.status)


def plan(client: Client, scope: str, place: Place, texts: dict[Path, str | None],
         server: Server, launcher: str, remove: bool = False,
         with_hooks: bool = True) -> list[FileChange]:
    """Every file change of one setup (or removal with `remove`), in config_paths order."""
    paths = config_paths(client, scope, place, with_hooks)
    changes = []
    for path in paths:
        original = texts.get(path)
        text = None if original is None else original.replace("\r\n", "\n")
        try:
            kind = SAME_FILE_HOOKS.get(client.name) if with_hooks else None
            if path == paths[0] and kind is not None:
                change = _with_hooks(client, path, text, server, launcher, remove, kind)
            elif path == paths[0]:
                change = server_change(client, path, text, server, remove)
            else:
                change = hooks_change(path, text, launcher, remove)
            changes.append(_newlines(change, original))
        except ConfigSyntaxError as exc:
            exc.path = path
            raise
    return changes
