"""How the inbound adapters (MCP, REST) get the MemoryService they are thin layers over.

Every adapter is handed `Services`, nothing else. A single-user server's come from its
container (tinycontext.entry.container); a service you already hold is wrapped in `OneService`;
a hosted server has one service per user (`RoutedServices`): which one a call gets depends on
the request being served, decided per request (and per MCP message), never per connection or
session.
"""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from typing import Protocol

from tinycontext.app.service import MemoryService

log = logging.getLogger("tinycontext.serve")
# The background thread that loads the model; entry.leaving ends the process early while it runs.
WARM_UP_THREAD = "tinycontext-warm-up"


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
    """One service you already hold, serving every request (tests, your own wiring)."""

    def __init__(self, service: MemoryService) -> None:
        self._service = service

    def current(self) -> MemoryService:
        return self._service

    def warm(self) -> None:
        self._service.tokenizer.count("warm up")
        self._service.embedder.embed(["warm up"])

    def close(self) -> None:
        self._service.close()


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


def warm_up(services: Services) -> threading.Thread:
    """Load the token vocabulary and the embedding model off the request path, once."""

    def run() -> None:
        try:
            services.warm()
        except Exception as exc:  # noqa: BLE001 - the first real call reports it properly
            log.warning("model warm-up failed (%s); the first call will retry", exc)

    thread = threading.Thread(target=run, name=WARM_UP_THREAD, daemon=True)
    thread.start()
    return thread
