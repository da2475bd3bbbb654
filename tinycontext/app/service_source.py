"""How the inbound adapters (MCP, REST) get the MemoryService they are thin layers over.

Every adapter is handed `Services`. Single-user servers have one service (`OneService`); a
hosted server has one per user (`RoutedServices`):
which one a call gets depends on the request being served, decided per request (and per MCP
message), never per connection or session.
"""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from tinycontext.app.service import MemoryService

ServiceSource = Callable[[], MemoryService]
log = logging.getLogger("tinycontext.serve")


@runtime_checkable
class Services(Protocol):
    """What every inbound adapter is handed: the service of the request being served, the
    warm-up of what every service shares, and closing everything the process opened."""

    def current(self) -> MemoryService:
        """The service for the request being served (UnauthorizedError without a caller)."""
        ...

    def warm(self) -> None:
        """Load what every service shares (model, vocabulary) without opening any store."""
        ...

    def close(self) -> None:
        """Close every service still open."""
        ...


class OneService(Services):
    """A single-user process's one service, built on first use by `build`."""

    def __init__(self, build: Callable[[], MemoryService]) -> None:
        self._build = build

    def current(self) -> MemoryService:
        return self._build()

    def warm(self) -> None:
        service = self._build()
        service.tokenizer.count("warm up")
        service.embedder.embed(["warm up"])

    def close(self) -> None:
        self._build().close()


class RoutedServices(Services, ABC):
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


# What an inbound adapter accepts: the process's Services, one MemoryService, or what builds
# the one service on first use.
Source = Services | MemoryService | ServiceSource


def services_of(source: Source) -> Services:
    """`source` as Services (one service given directly serves every request)."""
    if isinstance(source, MemoryService):
        return OneService(lambda: source)
    if isinstance(source, Services):
        return source
    return OneService(source)


def service_source(source: Source) -> ServiceSource:
    """The service of the request being served, asked for at each call."""
    return services_of(source).current


def close_source(source: Source) -> None:
    """Close what a server process opened: every routed service, or the one service."""
    services_of(source).close()


def warm_up(source: Source) -> threading.Thread:
    """Load the token vocabulary and the embedding model off the request path, once."""
    services = services_of(source)

    def run() -> None:
        try:
            services.warm()
        except Exception as exc:  # noqa: BLE001 - the first real call reports it properly
            log.warning("model warm-up failed (%s); the first call will retry", exc)

    thread = threading.Thread(target=run, name="tinycontext-warm-up", daemon=True)
    thread.start()
    return thread
