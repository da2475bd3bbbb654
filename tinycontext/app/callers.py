"""Who is calling: the check the HTTP transports run at their edge, as a port.

The transports (adapters/mcp, adapters/rest) take a `CallerCheck` and know nothing of how it
proves anyone; the bootstrap passes hosted mode's (adapters/hosting/tenancy.Access: the
trusted proxy's address, token and user-id header, and the management token). Without one, an
MCP server that serves management views uses `LocalCallers`: stdio is the machine's operator,
an HTTP caller is nobody in particular.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Protocol

from tinycontext.app.request_scope import Caller

Scope = MutableMapping[str, Any]  # an ASGI connection scope
Message = MutableMapping[str, Any]  # an ASGI event
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]  # as starlette.types spells it

UNAUTHORIZED_MESSAGE = (
    "The caller is not proven: requests must come through the authenticating proxy."
)


class Refused(Exception):
    """The caller is not proven; the reason is for the server log, never for the client."""


class CallerCheck(Protocol):
    """How a server identifies the caller of each request or MCP message."""

    @property
    def hosted(self) -> bool:
        """Whether every HTTP request must be proven (hosted mode): then `gate` is in front."""
        ...

    def caller(self, scope: Scope | None) -> Caller:
        """The caller of an HTTP request (its scope) or of stdio (None); Refused if unproven."""
        ...

    def gate(self, app: ASGIApp) -> ASGIApp:
        """`app` (ASGI) behind a gate that answers an unproven request itself (401) before
        anything runs, and runs a proven one inside its caller's RequestScope."""
        ...


class LocalCallers:
    """No proxy and no management token: stdio is the local operator, HTTP callers are not."""

    hosted = False

    def caller(self, scope: Scope | None) -> Caller:
        return Caller(operator=True, local=True) if scope is None else Caller()

    def gate(self, app: ASGIApp) -> ASGIApp:
        return app
