"""What hosted mode and a single-user server are handed by the composition root."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from tinycontext.app.service import MemoryService
    from tinycontext.app.service_source import Services
    from tinycontext.config.engine import TinyContextConfig
    from tinycontext.ports.store import Store


class ProcessParts(Protocol):
    """What the composition root (tinycontext.entry.container) hands a server process: its
    one service, or each user's service over the process's shared model, vocabulary, clock."""

    def single(self) -> Services:
        """The one service of a single-user process."""
        ...

    def tenant_service(self, store: Store, config: TinyContextConfig) -> MemoryService:
        """A user's service over `store` (hosted mode), sharing the process's ports."""
        ...

    def key_material(self, config: TinyContextConfig) -> bytes | None:
        """The SQLite encryption key material (None without one), SQLCipher made this
        process's SQLite; a bad key or a missing extra raises here, at start-up."""
        ...

    def warm(self) -> None:
        """Load the shared model and vocabulary, opening no store."""
        ...
