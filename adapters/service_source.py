"""How the inbound adapters (MCP, REST) get the one MemoryService they are thin layers over."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from tinycontext.service import MemoryService

ServiceSource = Callable[[], MemoryService]
log = logging.getLogger("tinycontext.serve")


def service_source(source: Any) -> ServiceSource:
    """Accept a MemoryService, a container (its `service` provider) or a zero-arg callable."""
    if isinstance(source, MemoryService):
        return lambda: source
    provider = getattr(source, "service", None)
    if callable(provider):
        return provider  # type: ignore[no-any-return]
    if callable(source):
        return source  # type: ignore[no-any-return]
    raise TypeError("expected a MemoryService, a container or a callable returning a service")


def warm_up(get_service: ServiceSource) -> threading.Thread:
    """Load the token vocabulary and the embedding model off the request path, once."""

    def run() -> None:
        try:
            service = get_service()
            service.tokenizer.count("warm up")
            service.embedder.embed(["warm up"])
        except Exception as exc:  # noqa: BLE001 - the first real call reports it properly
            log.warning("model warm-up failed (%s); the first call will retry", exc)

    thread = threading.Thread(target=run, name="tinycontext-warm-up", daemon=True)
    thread.start()
    return thread
