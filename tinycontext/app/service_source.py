"""How the inbound adapters (MCP, REST) get the MemoryService they are thin layers over.

Single-user servers have one service. A hosted server has one per user (`RoutedServices`):
which one a call gets depends on the request being served, decided per request (and per MCP
message), never per connection or session.
"""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from tinycontext.app.service import MemoryService

ServiceSource = Callable[[], MemoryService]
log = logging.getLogger("tinycontext.serve")


class RoutedServices(ABC):
    """A service per request: `current()` is the one of the request being served."""

    @abstractmethod
    def current(self) -> MemoryService:
        """The service for the current request's caller (UnauthorizedError without one)."""

    @abstractmethod
    def warm(self) -> None:
        """Load what every service shares (model, vocabulary) without opening any store."""

    @abstractmethod
    def close(self) -> None:
        """Close every service still open."""


def service_source(source: Any) -> ServiceSource:
    """Accept a MemoryService, a container (its `service` provider), RoutedServices or a
    zero-arg callable."""
    if isinstance(source, MemoryService):
        return lambda: source
    if isinstance(source, RoutedServices):
        return source.current
    provider = getattr(source, "service", None)
    if callable(provider):
        return provider  # type: ignore[no-any-return]
    if callable(source):
        return source  # type: ignore[no-any-return]
    raise TypeError("expected a MemoryService, a container or a callable returning a service")


def close_source(source: Any) -> None:
    """Close what a server process opened: every routed service, or the one service."""
    if isinstance(source, RoutedServices):
        source.close()
    else:
        service_source(source)().close()


def warm_up(source: Any) -> threading.Thread:
    """Load the token vocabulary and the embedding model off the request path, once."""

    def load() -> None:
        if isinstance(source, RoutedServices):
            source.warm()
            return
        service = service_source(source)()
        service.tokenizer.count("warm up")
        service.embedder.embed(["warm up"])

    def run() -> None:
        try:
            load()
        except Exception as exc:  # noqa: BLE001 - the first real call reports it properly
            log.warning("model warm-up failed (%s); the first call will retry", exc)

    thread = threading.Thread(target=run, name="tinycontext-warm-up", daemon=True)
    thread.start()
    return thread
