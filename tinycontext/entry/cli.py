"""The `tinycontext` command: MCP over stdio (default), Streamable HTTP, REST, doctor,
export, import, repair and the memory browser (ui). Logging goes to stderr; on stdio, stdout
belongs to the protocol."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from tinycontext.entry.cli_parser import DEFAULT_HOST, DEFAULT_PORT, DEFAULT_REST_PORT
from tinycontext.hooks.command import COMMANDS as HOOK_COMMANDS
from tinycontext.hooks.command import fast_hook

if TYPE_CHECKING:
    from starlette.types import ASGIApp

    from tinycontext.hosted.serving import Serving

SERVER_HINT = (
    "tinycontext {what} needs the `server` extra, which is not installed (missing: {missing}).\n"
    "{install}"
)


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
    if arguments:
        from tinycontext.entry.cli_parser import build_parser

        args = build_parser().parse_args(arguments)
    else:
        args = argparse.Namespace(command=None)
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
    return code


def console() -> None:
    """The `tinycontext` console script and `python -m tinycontext`: `main`, then the process's
    end, at once if a server stopped while its model still loads (entry/leaving.py). `main`
    itself always returns, for callers that run it inside a process of their own."""
    code = main()
    # Imported only now: it loads the service module, which the stdio server must not load
    # before it has answered the handshake.
    from tinycontext.entry.leaving import end_process

    raise SystemExit(end_process(code))
