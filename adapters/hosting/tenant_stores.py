"""Hosted mode: one store per user, opened lazily, at most `max_open` kept open.

Each user's tenant key is HMAC-SHA256(tenant secret, user id), so nothing stored reveals who
uses it: on SQLite it names the user's file, on PostgreSQL it is the `tenant` of their rows
(see pg_tenants). Services are leased per request: the one of the request's proven caller
(see tinycontext.app.request_scope) is looked up, or opened, and released when the request ends. The
least recently used services beyond `max_open` are closed (off the request path, and only
once no request still uses them); every service shares the process's one embedding model.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import queue
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tinycontext.app.request_scope import current_scope
from tinycontext.app.service import MemoryService
from tinycontext.app.service_source import RoutedServices
from tinycontext.app.unexpected import log_unexpected
from tinycontext.domain.errors import UnauthorizedError

log = logging.getLogger("tinycontext.hosted")
STORE_SUFFIX = ".db"
SQLITE_COMPANIONS = ("", "-wal", "-shm")


def tenant_key(secret: bytes, user_id: str) -> str:
    """A user's tenant key: 64 hex characters of HMAC-SHA256(secret, user id)."""
    return hmac.new(secret, user_id.encode("utf-8"), hashlib.sha256).hexdigest()


def store_name(secret: bytes, user_id: str) -> str:
    """The file name of a user's SQLite store: the tenant key, then `.db`."""
    return tenant_key(secret, user_id) + STORE_SUFFIX


class _Entry:
    __slots__ = ("service", "users", "retired")

    def __init__(self, service: MemoryService) -> None:
        self.service = service
        self.users = 0
        self.retired = False


class TenantServices(RoutedServices):
    """The per-user services of a hosted server, by tenant key, bounded by an LRU of open
    stores; `open_service(key)` builds one (the backends differ only there and in facts)."""

    backend = ""

    def __init__(
        self,
        secret: bytes,
        open_service: Callable[[str], MemoryService],
        max_open: int = 64,
        warm: Callable[[], None] | None = None,
    ) -> None:
        self._secret = secret
        self._open_service, self.max_open = open_service, max(1, max_open)
        self._warm = warm
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        # Evicted while a request still used them: closed when the last lease returns.
        self._retired: dict[int, _Entry] = {}
        self._closing: queue.SimpleQueue[MemoryService | None] = queue.SimpleQueue()
        self._closer: threading.Thread | None = None
        self.opened = self.evicted = 0

    # -- leases ----------------------------------------------------------------------------
    def _lookup(self, key: str) -> _Entry | None:
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
            entry.users += 1
        return entry

    def acquire(self, user_id: str) -> tuple[str, MemoryService]:
        """The user's service, counted as in use until `release` (opens it on first use)."""
        key = tenant_key(self._secret, user_id)
        with self._lock:
            entry = self._lookup(key)
        if entry is not None:
            return key, entry.service
        fresh = self._open_service(key)  # lazy: nothing is opened or connected yet
        to_close: list[MemoryService] = []
        with self._lock:
            entry = self._lookup(key)
            if entry is not None:  # another request opened it meanwhile
                to_close.append(fresh)
            else:
                entry = _Entry(fresh)
                entry.users = 1
                self._entries[key] = entry
                self.opened += 1
                while len(self._entries) > self.max_open:
                    _, oldest = self._entries.popitem(last=False)
                    self.evicted += 1
                    if oldest.users == 0:
                        to_close.append(oldest.service)
                    else:
                        oldest.retired = True
                        self._retired[id(oldest.service)] = oldest
        for service in to_close:
            self._close_later(service)
        return key, entry.service

    def release(self, key: str, service: MemoryService) -> None:
        close = False
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry.service is not service:
                entry = self._retired.get(id(service))
            if entry is not None:
                entry.users -= 1
                if entry.retired and entry.users == 0:
                    del self._retired[id(service)]
                    close = True
        if close:
            self._close_later(service)

    def current(self) -> MemoryService:
        """The service of the request being served (its proven caller's own store)."""
        scope = current_scope()
        user = scope.caller.user_id if scope is not None else None
        if scope is None or user is None:
            raise UnauthorizedError("The caller is not proven; no store is opened.")
        with scope.lock:
            leased = scope.leased.get(id(self))
        if leased is not None:
            return leased  # type: ignore[no-any-return]
        key, service = self.acquire(user)
        with scope.lock:
            scope.leased[id(self)] = service
        scope.on_release(lambda: self.release(key, service))
        return service

    # -- closing ---------------------------------------------------------------------------
    def _close_later(self, service: MemoryService) -> None:
        with self._lock:
            if self._closer is None or not self._closer.is_alive():
                self._closer = threading.Thread(
                    target=self._close_loop, name="tinycontext-store-closer", daemon=True
                )
                self._closer.start()
        self._closing.put(service)

    def _close_loop(self) -> None:
        while True:
            service = self._closing.get()
            if service is None:
                return
            try:
                service.close()
            except Exception as exc:  # noqa: BLE001 - one bad close must not stop the others
                log_unexpected(log, "closing an evicted store failed", exc)

    def close(self) -> None:
        """Close every open store (server shutdown)."""
        with self._lock:
            entries = list(self._entries.values()) + list(self._retired.values())
            self._entries.clear()
            self._retired.clear()
            closer = self._closer
        if closer is not None and closer.is_alive():
            self._closing.put(None)
            closer.join(timeout=30)
        for entry in entries:
            try:
                entry.service.close()
            except Exception as exc:  # noqa: BLE001
                log_unexpected(log, "closing a store failed", exc)

    # -- facts -----------------------------------------------------------------------------
    @property
    def open_count(self) -> int:
        with self._lock:
            return len(self._entries) + len(self._retired)

    def warm(self) -> None:
        """Load the shared token vocabulary and embedding model (no store is opened)."""
        if self._warm is not None:
            self._warm()

    def storage_facts(self) -> dict[str, Any]:
        """Operators' Service view: open stores (backends add store count and disk use)."""
        return {"open_stores": self.open_count, "max_open_stores": self.max_open}


class TenantStores(TenantServices):
    """Hosted mode on SQLite: one file per user, `<store_dir>/<tenant key>.db`."""

    backend = "sqlite"

    def __init__(
        self,
        store_dir: Path,
        secret: bytes,
        open_service: Callable[[Path], MemoryService],
        max_open: int = 64,
        warm: Callable[[], None] | None = None,
    ) -> None:
        self.store_dir = Path(store_dir)
        super().__init__(secret, lambda key: open_service(self.store_dir / (key + STORE_SUFFIX)),
                         max_open, warm)

    def path_for(self, user_id: str) -> Path:
        return self.store_dir / store_name(self._secret, user_id)

    def storage_facts(self) -> dict[str, Any]:
        """Store count and disk use of the store folder (operators' Service view)."""
        count, size = 0, 0
        with os.scandir(self.store_dir) as found:
            for item in found:
                if not item.is_file(follow_symlinks=False):
                    continue
                if item.name.endswith(STORE_SUFFIX):
                    count += 1
                if item.name.endswith(tuple(STORE_SUFFIX + c for c in SQLITE_COMPANIONS)):
                    size += item.stat(follow_symlinks=False).st_size
        return {"store_count": count, "disk_bytes": size, **super().storage_facts()}
