"""`tinycontext ui` and the `--ui` flag of `tinycontext rest` / `tinycontext serve`: start the
memory browser, print the link that signs a browser in, open it."""

from __future__ import annotations

import socket
import sys
from argparse import ArgumentParser
from typing import TYPE_CHECKING

from tinycontext.config.allowed_hosts import LOOPBACK, allowed_hosts

if TYPE_CHECKING:
    from starlette.types import ASGIApp

    from tinycontext.hosted.serving import Serving

UI_HELP = (
    "Serve the memory browser: see, search, correct and forget what agents remember. Local "
    "only by default (127.0.0.1, a free port); prints a link with a random access token that "
    "changes at every start and opens it in the browser. Pages change memories only through "
    "the same operations as MCP and REST."
)
HOSTED_REFUSAL = (
    "tinycontext ui serves one local store; in hosted mode (TINYCONTEXT_TENANCY) add --ui to "
    "`tinycontext rest` or `tinycontext serve` instead: the pages then sit behind the proxy's "
    "tenancy gate at /ui."
)


def add_ui_arguments(parser: ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind (default 127.0.0.1; anything else makes the "
                        "pages reachable from other machines, guarded by the token only)")
    parser.add_argument("--port", type=int, help="port (default: a free one)")
    parser.add_argument("--no-open", action="store_true",
                        help="print the link but do not open a browser")


def _listening_socket(host: str, port: int) -> socket.socket:
    """Bound and listening before the link is printed: a browser opened at once connects."""
    from tinycontext.adapters.mcp.transports import bind_advice, listening_socket

    try:
        return listening_socket(host, port)
    except OSError as exc:
        advice = bind_advice(exc, "--host", "pick another --port or leave it out for a free one")
        raise SystemExit(f"tinycontext ui: cannot listen on {host}:{port} ({exc.strerror}); "
                         f"{advice}.") from None


def run_ui(serving: Serving, host: str, port: int | None, open_browser: bool) -> None:
    """Serve the pages over the store until Ctrl+C."""
    import uvicorn

    from tinycontext.adapters.web.security import new_token
    from tinycontext.app.service_source import warm_up
    from tinycontext.entry.web_ui import ui_app, ui_link

    if serving.hosted:
        raise SystemExit(HOSTED_REFUSAL)
    if port is not None and not 0 < port < 65536:
        raise SystemExit(f"tinycontext ui: port must be 1-65535, got {port}")
    token = new_token()
    app = ui_app(serving.services, hosts=allowed_hosts(host), token=token)
    sock = _listening_socket(host, port or 0)
    link = ui_link(host, sock.getsockname()[1], token)
    if host.lower() not in (*LOOPBACK, "::1"):
        print(f"tinycontext ui: bound to {host}: other machines can reach these pages; the "
              "token in the link is all that protects them.", file=sys.stderr)
    print(f"TinyContext memory browser: {link}", flush=True)
    print("(the link signs this browser in; it changes at every start. Ctrl+C stops.)",
          file=sys.stderr, flush=True)
    warm_up(serving.services)  # the model loads while the first page renders: Ask is quick
    if open_browser:
        import webbrowser

        webbrowser.open(link)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                            server_header=False, proxy_headers=False)
    from tinycontext.adapters.mcp.transports import returning_server

    returning_server(config).run(sockets=[sock])


def with_ui(app: ASGIApp, serving: Serving, host: str, port: int, prefix: str = "/ui") -> ASGIApp:
    """`app` with the pages at /ui (`tinycontext rest --ui`, `serve --ui`); prints their link."""
    from tinycontext.adapters.web.security import new_token
    from tinycontext.entry.web_ui import mount_ui, ui_app, ui_link

    token = None if serving.hosted else new_token()
    pages = ui_app(serving.services, hosts=serving.hosts(host), access=serving.access, token=token)
    where = ui_link(host, port, token, prefix)
    note = " (behind the proxy's tenancy gate)" if serving.hosted else ""
    print(f"TinyContext memory browser{note}: {where}", flush=True)
    return mount_ui(app, pages)
