"""Running the MCP server: stdio, or Streamable HTTP at `/mcp` (standalone or mounted)."""

from __future__ import annotations

import errno
import logging
import socket
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any

from tinycontext.app.callers import CallerCheck
from tinycontext.app.management import Management
from tinycontext.app.service_source import Services
from tinycontext.config.allowed_hosts import allowed_hosts, host_allowed

from .server import TinyContextMCP, create_mcp_server
from .stdio import DRAIN_SECONDS, serve_front, serve_stdio
from .stdio_front import StdioFront

if TYPE_CHECKING:
    import uvicorn
    from starlette.routing import BaseRoute
    from starlette.types import ASGIApp, Receive, Scope, Send

log = logging.getLogger("tinycontext.mcp")
MCP_PATH = "/mcp"


def run_stdio(services: Services, management: Management | None = None,
              drain_seconds: float = DRAIN_SECONDS, front: StdioFront | None = None) -> None:
    """Serve MCP on stdin/stdout until the client closes the pipe (stdout: JSON-RPC only);
    requests still running then are answered before the process ends (mcp_stdio).

    With `front` (stdio_front.py: stdin and stdout already claimed, the handshake answered)
    the server takes over its queue; SIGINT and SIGTERM then end the input as a closed stdin
    does, and a second signal stops at once.
    """
    import anyio

    server = create_mcp_server(services, management=management)
    if front is None:
        anyio.run(serve_stdio, server, drain_seconds)
        return
    with stop_signals_end(front):
        anyio.run(serve_front, server, front, drain_seconds)


@contextmanager
def stop_signals_end(front: StdioFront) -> Iterator[None]:
    """SIGINT/SIGTERM end the client's input (answers in flight still go out), once."""
    import signal

    def stop(signum: int, frame: Any) -> None:
        for name in ("SIGINT", "SIGTERM"):  # a second signal: the default, at once
            signal.signal(getattr(signal, name), signal.default_int_handler)
        log.info("stopping on %s", signal.Signals(signum).name)
        front.end_input()

    previous = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        front.end_input()  # a worker thread may still wait for input: end it
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def http_app(
    services: Services,
    host: str = "127.0.0.1",
    *,
    hosts: list[str] | None | str = "auto",
    access: CallerCheck | None = None,
    management: Management | None = None,
    json_response: bool = False,
    stateless: bool = False,
) -> ASGIApp:
    """A Starlette app serving Streamable HTTP MCP at /mcp and GET /health.

    `json_response` answers each POST with one JSON body instead of an SSE stream (the
    tools send no notifications mid-call, so nothing is lost); `stateless` keeps no session
    between requests (no GET stream for server notifications). Both: see docs/reference/mcp.md.

    `hosts` lists accepted Host names (DNS-rebinding protection); "auto" = loopback names,
    the bound address and TINYCONTEXT_ALLOWED_HOSTS; None switches the check off.
    With a hosted `access` every request but /health must be proven by the proxy
    (401 otherwise), and `services` is normally the per-user TenantStores.
    """
    from starlette.requests import Request
    from starlette.responses import JSONResponse

    from tinycontext.version import __version__

    server = create_mcp_server(services, access=access, management=management)
    accepted = allowed_hosts(host) if hosts == "auto" else hosts

    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok", "version": __version__})

    server.custom_route("/health", methods=["GET"])(health)

    app: ASGIApp = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        transport_security=mcp_transport_security(accepted),  # type: ignore[arg-type]
        host=host, json_response=json_response, stateless_http=stateless,
    )
    if isinstance(accepted, list):
        app = strict_host_check(app, accepted)
    if access is not None and access.hosted:
        return access.gate(app)
    return app


def strict_host_check(app: ASGIApp, hosts: list[str]) -> ASGIApp:
    """Refuse /mcp requests whose Host header is not exactly an accepted `name[:port]`.

    The SDK's own check accepts any header that starts with an accepted name and a colon
    (`127.0.0.1:8765@evil.example`); its answer (421) is kept for every refusal.
    """
    from starlette.responses import PlainTextResponse

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("path", "").startswith(MCP_PATH):
            header = next((v.decode("latin-1") for k, v in scope.get("headers", [])
                           if k == b"host"), None)
            if not host_allowed(header, hosts):
                log.warning("refused an MCP request with a foreign Host header")
                await PlainTextResponse("Invalid Host header", 421)(scope, receive, send)
                return
        await app(scope, receive, send)

    return guarded


def mountable(
    server: TinyContextMCP, hosts: list[str] | None
) -> tuple[list[BaseRoute], Callable[[], AbstractAsyncContextManager[None]]]:
    """Routes to add to a host ASGI app, and the context its lifespan must enter.

    Streamable HTTP needs its session manager running; a host app (FastAPI, Starlette) must
    run it in its own lifespan, since a mounted sub-app's lifespan is never called.
    """
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH, transport_security=mcp_transport_security(hosts)
    )
    routes = [r for r in app.routes if getattr(r, "path", None) == MCP_PATH]

    @asynccontextmanager
    async def running() -> AsyncIterator[None]:
        async with server.session_manager.run():
            yield

    return routes, running


def mcp_transport_security(hosts: list[str] | None) -> Any:
    """The MCP SDK's TransportSecuritySettings for these hosts (protection off for None)."""
    from mcp.server.transport_security import TransportSecuritySettings

    if hosts is None:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    patterns, origins = [], []
    for host in hosts:
        has_port = host.rsplit(":", 1)[-1].isdigit() and not host.endswith("]")
        patterns += [host] if has_port else [host, f"{host}:*"]
        for scheme in ("http", "https"):
            origins += [f"{scheme}://{host}"] if has_port else [
                f"{scheme}://{host}", f"{scheme}://{host}:*"
            ]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=patterns, allowed_origins=origins
    )


HOST_OPTION = "--host (or TINYCONTEXT_HOST)"
PORT_ADVICE = "pick another --port (or TINYCONTEXT_PORT), or stop the program using it"


def serve_http(app: ASGIApp, host: str, port: int, what: str) -> None:
    """Run an ASGI app with uvicorn until SIGINT/SIGTERM (logs to stderr only)."""
    import uvicorn

    # proxy_headers off: the peer address must be the TCP peer (hosted mode trusts the proxy
    # by it), never a client address a forwarding header claims.
    config = uvicorn.Config(
        app, host=host, port=port, log_level="warning", access_log=False, lifespan="on",
        server_header=False, proxy_headers=False,
    )
    shown = f"[{host}]" if ":" in host else host
    try:
        sock = listening_socket(host, port)
    except OSError as exc:
        raise SystemExit(f"tinycontext: cannot listen on {shown}:{port} ({exc.strerror}); "
                         f"{bind_advice(exc, HOST_OPTION, PORT_ADVICE)}.") from None
    print(f"TinyContext {what} listening on http://{shown}:{port}", file=sys.stderr, flush=True)
    returning_server(config).run(sockets=[sock])


def bind_advice(exc: OSError, host_option: str, port_advice: str) -> str:
    """What to change when a server cannot listen: the address when it is not one of this
    machine's, else `port_advice` (the port is taken by another program, or privileged)."""
    if isinstance(exc, socket.gaierror) or exc.errno == errno.EADDRNOTAVAIL:
        return f"give an address of this machine in {host_option}"
    return port_advice


def listening_socket(host: str, port: int) -> socket.socket:
    """A bound, listening TCP socket for uvicorn: a busy port is known before anything says
    it listens, and a client told the address at once connects. OSError when it cannot bind."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    return sock


def returning_server(config: uvicorn.Config) -> uvicorn.Server:
    """A uvicorn Server that stops on SIGINT/SIGTERM as uvicorn does (a second SIGINT: at once)
    and then returns, so the caller closes the stores and flushes telemetry. uvicorn itself
    raises the signal again once stopped: SIGTERM then kills the process before that."""
    import signal
    import threading

    import uvicorn

    class Returning(uvicorn.Server):
        @contextmanager
        def capture_signals(self) -> Iterator[None]:
            if threading.current_thread() is not threading.main_thread():
                yield  # signals reach the main thread only
                return
            stops = (signal.SIGINT, signal.SIGTERM)
            previous = {s: signal.signal(s, self.handle_exit) for s in stops}
            try:
                yield
            finally:
                for signum, handler in previous.items():
                    signal.signal(signum, handler)

    return Returning(config)


__all__ = ["MCP_PATH", "bind_advice", "http_app", "listening_socket", "mountable",
           "returning_server", "run_stdio", "serve_http"]
