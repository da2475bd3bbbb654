"""The `tinycontext` command: MCP over stdio (default), Streamable HTTP, REST, doctor,
export, import, repair and the memory browser (ui). Logging goes to stderr; on stdio, stdout
belongs to the protocol."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from tinycontext.hooks.command import COMMANDS as HOOK_COMMANDS
from tinycontext.hooks.command import add_commands as add_hook_commands
from tinycontext.hooks.command import fast_hook

if TYPE_CHECKING:
    from starlette.types import ASGIApp

    from tinycontext.hosted.serving import Serving

SERVER_HINT = (
    "tinycontext {what} needs the `server` extra, which is not installed (missing: {missing}).\n"
    "{install}"
)
DEFAULT_HOST, DEFAULT_PORT, DEFAULT_REST_PORT = "127.0.0.1", 8000, 8001
# The commands that serve (and load the embedding model in the background while they do).
SERVERS = frozenset({"mcp", "serve", "rest", "ui"})


def _parser() -> argparse.ArgumentParser:
    from tinycontext.entry.exporting import REPAIR_HELP
    from tinycontext.version import __version__

    parser = argparse.ArgumentParser(
        prog="tinycontext",
        description="Token-light, local-first memory for AI agents. Without a command, runs the "
        "MCP server on stdio. Settings come from context_config.json and TINYCONTEXT_* "
        "variables (see `tinycontext doctor`).",
        epilog="Start here: `tinycontext setup claude-code` (or another client: `tinycontext "
        "setup --help`) connects your agent; `tinycontext doctor` checks that the store, "
        "SQLite and the model are ready and says what to fix. Each command's options: "
        "`tinycontext COMMAND --help`. Guides and reference: docs/README.md in the repository.",
    )
    parser.add_argument("--version", action="version", version=f"tinycontext {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="command")
    sub.add_parser("mcp", help="MCP server on stdio (the default)",
                   description="Serve MCP on stdin/stdout for a local agent client. "
                   "Clients start it themselves: `tinycontext setup CLIENT` adds it to "
                   "a client's config (see `tinycontext setup --help`).")
    for name, what, port in (("serve", "Streamable HTTP MCP at /mcp", DEFAULT_PORT),
                             ("rest", "the REST API (FastAPI)", DEFAULT_REST_PORT)):
        p = sub.add_parser(name, help=f"serve {what}", description=f"Serve {what}. Hosted "
                           "multi-user mode behind an authenticating proxy: "
                           "TINYCONTEXT_TENANCY=proxy-header (see docs/guides/hosted.md).")
        p.add_argument("--host", help=f"address to bind (TINYCONTEXT_HOST, default {DEFAULT_HOST})")
        p.add_argument("--port", type=int,
                       help=f"port (TINYCONTEXT_PORT, default {port})")
    sub.choices["rest"].add_argument("--with-mcp", action="store_true",
                                     help="also serve Streamable HTTP MCP at /mcp")
    # Streamable HTTP options of the MCP SDK (docs/reference/mcp.md, "HTTP response modes").
    # One JSON body per request is the default: the tools send nothing mid-call, every MCP
    # client must accept application/json, and it costs the server less CPU a call than an SSE
    # stream, which matters most to hosted mode under load (docs/benchmarks.md).
    modes = sub.choices["serve"].add_mutually_exclusive_group()
    modes.add_argument(
        "--json-response", dest="sse", action="store_false",
        help="answer each MCP request with one JSON body (the default)")
    modes.add_argument(
        "--sse", dest="sse", action="store_true",
        help="answer each MCP request with an SSE stream instead of one JSON body")
    sub.choices["serve"].set_defaults(sse=False)
    sub.choices["serve"].add_argument(
        "--stateless", action="store_true",
        help="keep no MCP session between requests (no server-to-client stream)")
    from tinycontext.entry.ui_command import UI_HELP, add_ui_arguments

    for name in ("serve", "rest"):
        sub.choices[name].add_argument("--ui", action="store_true", help="also serve the "
                                       "memory browser at /ui (prints its link)")
    add_ui_arguments(sub.add_parser("ui", help="open the memory browser in a web browser",
                                    description=UI_HELP))
    doctor = sub.add_parser("doctor", help="show the configuration and check readiness",
                            description="Print the resolved configuration and check storage, "
                            "SQLite/FTS5, sqlite-vec and the embedding model. Exit 0 when ready.")
    doctor.add_argument("--json", action="store_true", help="machine-readable output")
    export = sub.add_parser("export", help="write the store as JSON Lines",
                            description="Export every memory (or one session's) as JSON Lines. "
                            "The file is created owner-only (0600) and only once complete.")
    repair = sub.add_parser("repair", help="salvage a damaged store as JSON Lines",
                            description=REPAIR_HELP)
    for p in (export, repair):
        p.add_argument("-o", "--output", default="-", help="file to write (default stdout): "
                       "owner-only (0600), in place only once complete")
        p.add_argument("--session", help="only this session's memories")
        p.add_argument("--no-embeddings", action="store_true",
                       help="leave vectors out (smaller file; import re-embeds)")
        p.add_argument("--encrypt", action="store_true", help="encrypt the file with the "
                       "configured key (AES-256-GCM; docs/guides/encryption.md); import reads it")
    from tinycontext.entry.import_command import IMPORT_HELP, add_arguments

    add_arguments(sub.add_parser("import", help="import an export (ours, ChatGPT, Claude, "
                                 "MCP memory, Mem0, Markdown ...)", description=IMPORT_HELP))
    from tinycontext.entry.setup_command import register as register_setup

    register_setup(sub)
    add_hook_commands(sub)
    from tinycontext.entry.encryption_command import add_parsers

    add_parsers(sub)
    return parser


def _missing(*modules: str) -> list[str]:
    missing = []
    for name in modules:
        try:
            importlib.import_module(name)  # imported next anyway; a broken install counts too
        except ImportError:
            missing.append(name)
    return missing


def _needs(what: str, *modules: str) -> int | None:
    missing = _missing(*modules)
    if missing:
        from tinycontext.version import install_command

        install = f"Install it into this environment: {install_command('server')}"
        print(SERVER_HINT.format(what=what, missing=", ".join(missing), install=install),
              file=sys.stderr)
        return 2
    return None


def _address(args: argparse.Namespace, default_port: int) -> tuple[str, int]:
    from tinycontext.entry.bootstrap import bind_address, read_variables

    return bind_address(args.host, args.port, read_variables(), DEFAULT_HOST, default_port)


# How long the stdio server may leave loading to answer the handshake first (a client that
# connects and waits gets the model loaded after this).
HANDSHAKE_HEAD_START = 1.0
STDIO_HINT = (
    "tinycontext: this is the MCP server on stdio, waiting for an MCP client to talk to it on "
    "stdin (nothing to type here; Ctrl+C quits). Your agent starts it itself once it is in "
    "the agent's MCP settings: `tinycontext setup claude-code` (or cursor, vscode, codex ...: "
    "`tinycontext setup --help`) adds it; `tinycontext --help` lists the HTTP, REST and "
    "doctor commands."
)


def _stdin_is_terminal() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (ValueError, OSError):  # closed or detached stdin: not a person typing
        return False


def cmd_mcp(args: argparse.Namespace) -> int:
    from importlib.util import find_spec

    if find_spec("mcp") is None and (code := _needs("mcp", "mcp")) is not None:
        return code
    if _stdin_is_terminal():  # started by hand, not by a client: say why nothing happens
        print(STDIO_HINT, file=sys.stderr, flush=True)
    from tinycontext.adapters.mcp.stdio_front import ClaimedStdio

    # The handshake is answered from here on; the settings, SDK, store and model load after.
    with ClaimedStdio() as front:
        front.wait_for_handshake(HANDSHAKE_HEAD_START)
        _setup_logging()
        if (code := _needs("mcp", "mcp")) is not None:
            return code
        from tinycontext.adapters.mcp.transports import run_stdio
        from tinycontext.entry.bootstrap import serve

        return serve("stdio", lambda s: run_stdio(s.services, s.management, front=front))


def cmd_serve(args: argparse.Namespace) -> int:
    if (code := _needs("serve", "mcp", "uvicorn")) is not None:
        return code
    host, port = _address(args, DEFAULT_PORT)
    from tinycontext.adapters.mcp.transports import http_app, serve_http
    from tinycontext.entry.bootstrap import serve

    def run(s: Serving) -> None:
        app = http_app(s.services, host, hosts=s.hosts(host), access=s.access,
                       management=s.management, json_response=not args.sse,
                       stateless=args.stateless)
        if args.ui:
            from tinycontext.entry.ui_command import with_ui

            app = with_ui(app, s, host, port)
        serve_http(app, host, port, "MCP at /mcp" + (" (hosted mode)" if s.hosted else ""))

    return serve("http", run)


def cmd_rest(args: argparse.Namespace) -> int:
    modules = ("fastapi", "uvicorn", *(("mcp",) if args.with_mcp else ()))
    if (code := _needs("rest", *modules)) is not None:
        return code
    host, port = _address(args, DEFAULT_REST_PORT)
    from tinycontext.adapters.mcp.transports import serve_http
    from tinycontext.entry.bootstrap import serve
    from tinycontext.rest import create_app

    def run(s: Serving) -> None:
        app: ASGIApp = create_app(s.services, mcp=args.with_mcp, hosts=s.hosts(host),
                                  access=s.access, management=s.management)
        if args.ui:
            from tinycontext.entry.ui_command import with_ui

            app = with_ui(app, s, host, port)
        serve_http(app, host, port, "REST API" + (" (hosted mode)" if s.hosted else ""))

    return serve("http", run)


def cmd_ui(args: argparse.Namespace) -> int:
    if (code := _needs("ui", "starlette", "uvicorn", "jinja2")) is not None:
        return code
    from tinycontext.entry.bootstrap import serve
    from tinycontext.entry.ui_command import run_ui

    return serve("http", lambda s: run_ui(s, args.host, args.port, not args.no_open))


def cmd_doctor(args: argparse.Namespace) -> int:
    from tinycontext.entry.bootstrap import read_settings
    from tinycontext.entry.doctor import run_doctor

    settings = read_settings()
    return run_doctor(settings.config, sys.stdout, as_json=args.json, environ=settings.environ)


def cmd_export(args: argparse.Namespace) -> int:
    from tinycontext.entry.exporting import cmd_export as export

    return export(args)


def cmd_repair(args: argparse.Namespace) -> int:
    from tinycontext.entry.exporting import cmd_repair as repair

    return repair(args)


def cmd_import(args: argparse.Namespace) -> int:
    from tinycontext.entry.import_command import run

    return run(args)


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "mcp": cmd_mcp, "serve": cmd_serve, "rest": cmd_rest, "doctor": cmd_doctor,
    "export": cmd_export, "import": cmd_import, "repair": cmd_repair, "ui": cmd_ui,
    "setup": lambda args: importlib.import_module("tinycontext.entry.setup_command").run(args),
    **HOOK_COMMANDS,
}


def cmd_encryption(args: argparse.Namespace) -> int:
    from tinycontext.entry.encryption_command import run

    return run(args)


COMMANDS.update(dict.fromkeys(("keygen", "encrypt", "decrypt", "rekey"), cmd_encryption))


def _setup_logging() -> None:
    from tinycontext.entry.bootstrap import read_variables, setup_logging

    setup_logging(read_variables())


def _os_error(command: str, exc: OSError) -> str:
    """The operating system's own refusal, worded for the user (no errno, no repr)."""
    return (f"tinycontext {command}: {exc.filename}: {exc.strerror}; check that the path "
            "exists and that this user may use it (`tinycontext doctor` checks the store).")


def main(argv: Sequence[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else list(argv)
    if (code := fast_hook(arguments)) is not None:
        return code  # once per prompt: no parser, no settings layer, no model
    # The bare command is the stdio server, whose client is waiting: no parser to build.
    args = argparse.Namespace(command=None) if not arguments else _parser().parse_args(arguments)
    if args.command == "context":  # like a hook: the memory service answers
        return COMMANDS[args.command](args)
    command = args.command or "mcp"
    if command != "mcp":  # the stdio server sets it up once the handshake is answered
        _setup_logging()
    from tinycontext.domain.errors import TinyContextError

    try:
        code = COMMANDS[command](args)
    except TinyContextError as exc:  # configuration errors name the bad key
        print(f"tinycontext: {exc.message}", file=sys.stderr)
        code = 2
    except OSError as exc:
        print(f"tinycontext: {exc}" if exc.filename is None else _os_error(command, exc),
              file=sys.stderr)
        code = 1
    except KeyboardInterrupt:
        code = 130
    if command not in SERVERS:
        return code
    from tinycontext.entry.leaving import end_process

    return end_process(code)  # a server stopped while its model still loads ends here
