"""`tinycontext setup <client>`: connect an agent client in one command (its config file gets
our MCP server entry; Claude Code also gets the recall hooks). The formats and merging live in
tinycontext.clients; this module reads and writes the files and talks to the person."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from tinycontext.clients.catalog import Place
    from tinycontext.clients.plan import FileChange

# Every CLI start builds the parser (a hook call too), so the parser's parts stay free of
# imports; tests/unit/test_clients_status.py checks this list against the catalog.
CLIENT_NAMES = ("claude-code", "claude-desktop", "cursor", "vscode", "codex", "copilot",
                "gemini", "lmstudio", "windsurf", "zed")
HELP = (
    "Connect an agent client to TinyContext in one command: adds the `tinycontext` MCP server "
    "to the client's own config file (merged beside your other servers, a backup of the "
    "previous file kept next to it, nothing done when already configured). For Claude Code it "
    "also installs the SessionStart and UserPromptSubmit hooks that bring relevant memories "
    "into the prompt without a tool call (Gemini CLI: SessionStart and BeforeAgent, in the "
    "same settings.json). See docs/guides/clients.md."
)
EPILOG = (
    "Clients (scopes): claude-code (user, project), claude-desktop (user), cursor (user, "
    "project), vscode (user, project), codex (user, project), copilot (user, project), gemini "
    "(user, project), lmstudio (user), windsurf (user), zed (user, project). Examples: "
    "`tinycontext setup claude-code` "
    "(user scope), `tinycontext setup claude-code --scope project` (this folder's .mcp.json "
    "and .claude/settings.json), `tinycontext setup codex --http http://127.0.0.1:8000/mcp`, "
    "`tinycontext setup cursor --remove`, `tinycontext setup --list`."
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The `setup` subcommand on the central CLI's parser."""
    add_arguments(sub.add_parser("setup", help="connect an agent client (Claude Code, Cursor, "
                                 "VS Code, Codex ...) in one command", description=HELP,
                                 epilog=EPILOG))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("client", nargs="?", metavar="client",
                        help="which client: " + ", ".join(CLIENT_NAMES))
    parser.add_argument("--scope", choices=("user", "project"), default="user",
                        help="user: your own config, every project (default); project: the "
                        "current folder's config (shared with whoever uses the folder)")
    parser.add_argument("--http", metavar="URL", help="connect to a running `tinycontext "
                        "serve` at URL (e.g. http://127.0.0.1:8000/mcp) instead of starting "
                        "`tinycontext mcp` over stdio")
    parser.add_argument("--remove", action="store_true",
                        help="take our server entry (and our hooks) out again; nothing else")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the changes as a unified diff and write nothing")
    parser.add_argument("--list", action="store_true",
                        help="show which clients are configured, and in which files")
    parser.add_argument("--no-hooks", action="store_true",
                        help="Claude Code, Gemini CLI: add the MCP server only, not the recall "
                        "hooks")


def launcher() -> list[str]:
    """The absolute command that runs this installation's `tinycontext`."""
    import shutil

    name = "tinycontext.exe" if os.name == "nt" else "tinycontext"
    started = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if started is not None and started.name == name and started.is_file():
        return [str(started.absolute())]
    beside = Path(sys.executable).parent / name
    if beside.is_file():
        return [str(beside.absolute())]
    found = shutil.which("tinycontext")
    if found:
        return [str(Path(found).absolute())]
    return [str(Path(sys.executable).absolute()), "-m", "tinycontext"]


def temporary(command: str) -> bool:
    """A command inside uv's cache (`uvx`): it can vanish when the cache is cleaned."""
    parts = Path(command).parts
    return any(part.startswith(("archive-v", "builds-v")) for part in parts) and "uv" in parts


def quoted(command: list[str]) -> str:
    """A command line for a shell (hooks run through one)."""
    import shlex

    if os.name == "nt":
        return " ".join(f'"{part}"' if " " in part else part for part in command)
    return shlex.join(command)


def place() -> Place:
    from tinycontext.clients import files
    from tinycontext.config.settings import environment

    return files.local_place(environment())


def _http_url(raw: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(raw.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"--http needs an http:// or https:// URL with a host, got {raw!r} "
                         "(e.g. http://127.0.0.1:8000/mcp)")
    if parts.path in ("", "/"):  # `tinycontext serve` answers at /mcp
        return parts._replace(path="/mcp").geturl()
    return parts.geturl()


def _diff(change: FileChange) -> str:
    import difflib

    old = (change.old or "").splitlines(keepends=True)
    new = (change.new or "").splitlines(keepends=True)
    lines = difflib.unified_diff(old, new, f"{change.path} (before)" if change.old is not None
                                 else "/dev/null", f"{change.path} (after)"
                                 if change.new is not None else "/dev/null")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)


def _report(change: FileChange, backup: Path | None, out: IO[str], dry_run: bool = False) -> None:
    where = change.path
    done = {"added": "would add", "updated": "would update", "removed": "would remove",
            "deleted": "would be deleted"} if dry_run else {}
    said = {
        "added": f"{done.get('added', 'added')} {change.what} to {where}",
        "updated": f"{done.get('updated', 'updated')} {change.what} in {where}",
        "unchanged": f"already configured: {change.what} in {where} (no change)",
        "removed": f"{done.get('removed', 'removed')} {change.what} from {where}" + (
            f" (the file held nothing else and {done.get('deleted', 'was deleted')})"
            if change.new is None else ""),
        "absent": f"not configured: no {change.what} in {where} (nothing to remove)",
    }[change.status]
    if backup is not None:
        said += f"; previous file saved as {backup}"
    print(said, file=out)


def _apply(changes: list[FileChange], dry_run: bool, out: IO[str]) -> None:
    from tinycontext.clients import files

    for change in changes:
        if dry_run:
            if change.changed:
                out.write(_diff(change))
            _report(change, None, out, dry_run=True)
            continue
        saved = None
        if change.changed and change.new is None and change.old is not None:
            saved = files.remove(change.path, change.old)
        elif change.changed and change.new is not None:
            saved = files.write(change.path, change.new, change.old)
        _report(change, saved, out)
    if dry_run:
        print("dry run: nothing was written", file=out)


def _list(names: list[str], out: IO[str]) -> int:
    from tinycontext.clients import files, status
    from tinycontext.clients.catalog import CLIENTS

    chosen = [CLIENTS[n] for n in names] if names else None
    states = status.survey(place(), files.read, lambda p: p.exists(), chosen)
    for state in states:
        print(status.line(state), file=out)
    return 0


def _hint(client_name: str, scope: str, remove: bool, out: IO[str]) -> None:
    from tinycontext.clients.catalog import CLIENTS

    if remove:
        return
    if client_name == "claude-code":
        print("Next: start `claude` (running sessions pick it up when restarted); "
              "`claude mcp get tinycontext` shows the server." + (
                  " Claude Code asks once to approve the project's .mcp.json servers."
                  if scope == "project" else ""), file=out)
    else:
        print(f"Next: restart {CLIENTS[client_name].title} (or reload its MCP servers).",
              file=out)


def run(args: argparse.Namespace, out: IO[str] | None = None, err: IO[str] | None = None) -> int:
    from tinycontext.clients import files, plan
    from tinycontext.clients.catalog import ALIASES, CLIENTS, Server, find
    from tinycontext.clients.jsontext import ConfigSyntaxError

    out, err = out or sys.stdout, err or sys.stderr
    client = find(args.client) if args.client else None
    if args.client and client is None:
        known = ", ".join([*CLIENTS, *ALIASES])
        print(f"tinycontext setup: unknown client {args.client!r}; known: {known}", file=err)
        return 2
    if args.list:
        return _list([client.name] if client else [], out)
    if client is None:
        print("tinycontext setup: name a client (e.g. `tinycontext setup claude-code`), or "
              "use --list to see which are configured. Clients: " + ", ".join(CLIENTS),
              file=err)
        return 2
    if args.scope not in client.scopes:
        print(f"tinycontext setup: {client.title} has no {args.scope} scope (it has: "
              f"{', '.join(client.scopes)})", file=err)
        return 2
    command = launcher()
    if temporary(command[0]) and not args.remove:
        print(f"tinycontext setup: note: {command[0]} is in uv's cache (uvx), which `uv cache "
              "clean` removes; for a lasting path install it (`uv tool install` or pip) and run "
              "setup from there.", file=err)
    try:
        url = _http_url(args.http) if args.http else ""
        server = Server(url=url) if url else Server(command[0], (*command[1:], "mcp"))
        if not args.remove:
            client.entry(server)  # refuses --http where the client has no HTTP entry
        where = place()
        with_hooks = not args.no_hooks
        paths = plan.config_paths(client, args.scope, where, with_hooks)
        texts = {path: files.read(path) for path in paths}
        changes = plan.plan(client, args.scope, where, texts, server, quoted(command),
                            remove=args.remove, with_hooks=with_hooks)
    except ConfigSyntaxError as exc:
        print(f"tinycontext setup: {exc.located()}. Nothing was changed: fix the file (or move "
              "it aside) and run setup again.", file=err)
        return 2
    except files.ConfigFileError as exc:
        print(f"tinycontext setup: {exc}", file=err)
        return 2
    except ValueError as exc:
        print(f"tinycontext setup: {exc}", file=err)
        return 2
    try:
        _apply(changes, args.dry_run, out)
    except files.ConfigFileError as exc:
        print(f"tinycontext setup: {exc}", file=err)
        return 1
    if not args.dry_run and any(c.changed for c in changes):
        _hint(client.name, args.scope, args.remove, out)
    return 0

