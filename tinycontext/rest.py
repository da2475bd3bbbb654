"""The REST app a server process runs, composed from the file + environment configuration.

    uvicorn tinycontext.rest:app --port 8001

`app` is built on first access (module `__getattr__`), so importing this module opens
nothing. The earlier import path `tinycontext.adapters.rest_api:app` returns this same app.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from tinycontext.domain.errors import TinyContextError

if TYPE_CHECKING:
    from fastapi import FastAPI

    from tinycontext.adapters.hosting.tenancy import Access
    from tinycontext.app.management import Management
    from tinycontext.app.service_source import Services
    from tinycontext.entry.container import Container


def create_app(
    source: Container | Services,
    *,
    mcp: bool = False,
    hosts: list[str] | None = None,
    on_shutdown: Callable[[], None] | None = None,
    warm: bool = True,
    access: Access | None = None,
    management: Management | None = None,
) -> FastAPI:
    """The REST app over a container, or over the process's Services (`OneService(service)`
    for a MemoryService you hold).

    `mcp=True` also serves Streamable HTTP MCP at /mcp from the same process and service;
    `hosts` turns on the Host-header check (see tinycontext.config.allowed_hosts);
    `on_shutdown` runs last;
    `warm` loads the embedding model in the background at startup. With `access.trust`
    (hosted mode) every route but /health needs a proxy-proven caller (401 otherwise) and
    works on that caller's own store; `management` adds the management resources to /mcp.
    The memory browser at /ui is composed around it (tinycontext.entry.web_ui.mount_ui).
    """
    from tinycontext.adapters.rest.api import build_app
    from tinycontext.entry.container import Container, container_services

    services = container_services(source) if isinstance(source, Container) else source
    mounted = None
    if mcp:
        from tinycontext.adapters.mcp.server import create_mcp_server
        from tinycontext.adapters.mcp.transports import mountable

        server = create_mcp_server(services, warm=False, access=access, management=management)
        mounted = mountable(server, hosts)
    return build_app(services, hosts=hosts, on_shutdown=on_shutdown, warm=warm, access=access,
                     mounted=mounted)


def app_from_environment(*, mcp: bool = False, bind_host: str | None = None) -> FastAPI:
    """The app a server process runs: config from file + env, telemetry from OTEL_*, hosted
    mode and management from TINYCONTEXT_TENANCY / TINYCONTEXT_MANAGEMENT (validated); the
    steps are tinycontext.entry.bootstrap's, as for `tinycontext rest`. Closing the stores and
    flushing telemetry are the app's own shutdown."""
    from tinycontext.entry.bootstrap import open_server, read_settings

    settings = read_settings()
    serving, shutdown = open_server("http", settings)
    host = bind_host if bind_host is not None else settings.variables.host
    return create_app(
        serving.services, mcp=mcp, hosts=serving.hosts(host), on_shutdown=shutdown,
        access=serving.access, management=serving.management,
    )


_app: FastAPI | None = None


def __getattr__(name: str) -> FastAPI:
    global _app
    if name == "app":
        if _app is None:
            try:
                _app = app_from_environment()
            except (TinyContextError, OSError) as exc:
                # An ASGI server (`uvicorn tinycontext.rest:app`) would print its own 40-line
                # traceback above the message: a bad setting gets the message only, as
                # `tinycontext rest` prints it, and a non-zero exit.
                text = exc.message if isinstance(exc, TinyContextError) else str(exc)
                raise SystemExit(f"tinycontext: {text}") from None
        return _app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
