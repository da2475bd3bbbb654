"""Start-up: the one path from a process's environment to what it serves.

Every entry point goes through here: the `tinycontext` command (cli.py), the REST app an ASGI
server imports (`tinycontext.rest:app` and its earlier path, composed in rest.py over
`open_server`), hosted mode (the same two, with TINYCONTEXT_TENANCY), and the Python API
(api.py, which reads no environment: its services come from `build_service` with a config
built in code).
This module imports none of them (they import it). The steps, in order:

1. settings: the engine config (JSON file + TINYCONTEXT_*) and the server variables, read by
   tinycontext.config.settings, the only module that reads the environment;
2. the server settings (hosted mode, management), validated all at once;
3. telemetry from OTEL_* (off unless asked for);
4. what to serve: one store, or one per proxy-proven user (tinycontext.hosted.serving);
5. the heap trimmer of a long-running process.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from tinycontext.app.service import MemoryService
    from tinycontext.config.engine import TinyContextConfig
    from tinycontext.config.settings import ServerVariables
    from tinycontext.hosted.serving import Serving

__all__ = [
    "ProcessSettings", "read_settings", "read_variables", "setup_logging", "bind_address",
    "open_server", "serve", "engine_service",
]


@dataclass(frozen=True)
class ProcessSettings:
    """What a server process read at start-up."""

    config: TinyContextConfig
    variables: ServerVariables
    environ: Mapping[str, str]  # the rest of the environment: OTEL_* for telemetry


def read_variables(environ: Mapping[str, str] | None = None) -> ServerVariables:
    from tinycontext.config.settings import server_variables

    return server_variables(environ)


def read_settings(environ: Mapping[str, str] | None = None) -> ProcessSettings:
    """The engine config and the server variables; ConfigError names a bad key or name."""
    from tinycontext.config.settings import environment, load_config

    env = dict(environment() if environ is None else environ)
    config = load_config(env)
    return ProcessSettings(config, read_variables(env), env)


def setup_logging(variables: ServerVariables) -> None:
    """Logs to stderr (on stdio, stdout belongs to the protocol) at TINYCONTEXT_LOG_LEVEL."""
    level = (variables.log_level or "WARNING").upper()
    logging.basicConfig(
        stream=sys.stderr, level=getattr(logging, level, logging.WARNING),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


def bind_address(host: str | None, port: int | None, variables: ServerVariables,
                 default_host: str, default_port: int) -> tuple[str, int]:
    """Command-line options, then TINYCONTEXT_HOST / TINYCONTEXT_PORT, then the defaults."""
    host = host or variables.host or default_host
    if port is None:
        raw = variables.port if variables.port is not None else str(default_port)
        try:
            port = int(raw)
        except ValueError:
            raise SystemExit(f"tinycontext: TINYCONTEXT_PORT is not a number: {raw!r}") from None
    if not 0 < port < 65536:
        raise SystemExit(f"tinycontext: port must be 1-65535, got {port}")
    return host, port


def open_server(transport: Literal["stdio", "http"],
                settings: ProcessSettings | None = None) -> tuple[Serving, Callable[[], None]]:
    """Steps 2-5: what the process serves, and the telemetry flush-and-shutdown to run last."""
    from tinycontext.adapters.system.heap import start_heap_trimmer
    from tinycontext.entry.container import process_parts
    from tinycontext.hosted.serving import open_serving
    from tinycontext.hosted.settings import check_server_settings
    from tinycontext.telemetry import setup as telemetry

    settings = settings or read_settings()
    # The variables read_settings parsed: one parse, one source of truth for the process.
    server = check_server_settings(settings.variables, transport=transport,
                                   store_url=settings.config.store_url)
    shutdown = telemetry.configure_from_environment(settings.environ)
    serving = open_serving(settings.config, server, process_parts(settings.config))
    start_heap_trimmer()  # a long-running process: freed heap goes back to the OS (see heap)
    return serving, shutdown


def serve(transport: Literal["stdio", "http"], run: Callable[[Serving], None],
          settings: ProcessSettings | None = None) -> int:
    """Open the server, run it, and close every store and flush telemetry at the end."""
    serving, shutdown = open_server(transport, settings)
    try:
        run(serving)
    finally:
        serving.close()
        shutdown()
    return 0


def engine_service(settings: ProcessSettings | None = None) -> MemoryService:
    """The service of a one-off command (import, a hook): the configured store, nothing
    served; closing it shuts its container down (the store closes with it)."""
    from tinycontext.entry.container import build_service

    return build_service((settings or read_settings()).config)

