"""Who the request being served acts for: its Caller, in a context variable for everything run
inside it (threads started via anyio too), with what was leased for it released at its end.
Transport-neutral: hosted mode's HTTP edge (adapters/hosting/tenancy.py) proves the caller,
stdio is the operator; the per-user registry and the management views read it."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Caller:
    """Who sent the request being served."""

    user_id: str | None = None  # proven by the proxy (hosted mode only)
    operator: bool = False  # stdio, or a valid management Bearer token
    local: bool = False  # stdio: the operator's own machine

    def __repr__(self) -> str:  # never print the user id into logs or tracebacks
        return f"Caller(user={'set' if self.user_id else None}, operator={self.operator})"


class RequestScope:
    """The caller of one request plus what was leased for it (released when it ends)."""

    def __init__(self, caller: Caller) -> None:
        self.caller = caller
        self.lock = threading.Lock()
        self.leased: dict[int, Any] = {}
        self._releases: list[Callable[[], None]] = []

    def on_release(self, release: Callable[[], None]) -> None:
        with self.lock:
            self._releases.append(release)

    def release(self) -> None:
        with self.lock:
            releases, self._releases = self._releases, []
            self.leased.clear()
        for release in reversed(releases):
            release()


_current: contextvars.ContextVar[RequestScope | None] = contextvars.ContextVar(
    "tinycontext_request_scope", default=None
)


def current_scope() -> RequestScope | None:
    return _current.get()


@contextmanager
def request_scope(caller: Caller) -> Iterator[RequestScope]:
    """Make `caller` the caller of everything run inside (threads started via anyio too)."""
    scope = RequestScope(caller)
    token = _current.set(scope)
    try:
        yield scope
    finally:
        _current.reset(token)
        scope.release()
