"""MCP over stdin/stdout, where requests still running when stdin closes are answered first.

The SDK's stdio loop ends at end of input and cancels the handlers still running, so a client
that writes its requests and closes stdin (a script piping in a batch, or a client shutting
down after its last call) lost those answers: a save could be stored without the client
hearing of it. Here the server runs on the SDK's own `stdio_server()` streams (which keep fd 0
and 1 away from stray reads and prints), wrapped so that end of input is passed on only once
every request read has been answered, cancelled by the client, or `drain_seconds` passed.
"""

from __future__ import annotations

import logging
from types import TracebackType
from typing import Any

import anyio
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCError, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse

from .stdio_front import StdioFront

log = logging.getLogger("tinycontext.mcp")

# How long answers to requests in flight at end of input may take. A save of the largest
# allowed batch takes seconds; past this the SDK's shutdown answers `Connection closed`.
DRAIN_SECONDS = 60.0


def _key(request_id: Any) -> str:
    return str(request_id)  # the SDK matches "7" and 7 as one id too


class OpenRequests:
    """Ids of requests read from the client and not yet answered."""

    def __init__(self) -> None:
        self._open: set[str] = set()
        self._changed = anyio.Event()

    def __len__(self) -> int:
        return len(self._open)

    def opened(self, request_id: Any) -> None:
        self._open.add(_key(request_id))

    def closed(self, request_id: Any) -> None:
        if request_id is not None and _key(request_id) in self._open:
            self._open.discard(_key(request_id))
            self._changed.set()

    async def settled(self, seconds: float) -> bool:
        """Wait until none is open (True), or `seconds` passed (False)."""
        with anyio.move_on_after(seconds):
            while self._open:
                self._changed = anyio.Event()
                await self._changed.wait()
        return not self._open


class DrainingReader:
    """The read stream of `stdio_server()`, ending only once its requests are answered."""

    def __init__(self, inner: Any, requests: OpenRequests, drain_seconds: float) -> None:
        self._inner = inner
        self._requests = requests
        self._drain_seconds = drain_seconds

    @property
    def last_context(self) -> Any:  # the sender's contextvars, read by the SDK's dispatcher
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        try:
            item = await self._inner.receive()
        except anyio.EndOfStream:
            if self._requests:
                log.debug("stdin closed with %d requests running; answering them first",
                          len(self._requests))
                if not await self._requests.settled(self._drain_seconds):
                    log.warning("stdin closed; %d requests still running after %.0f s are "
                                "abandoned", len(self._requests), self._drain_seconds)
            raise
        if isinstance(item, SessionMessage):
            message = item.message
            if isinstance(message, JSONRPCRequest):
                self._requests.opened(message.id)
            elif (isinstance(message, JSONRPCNotification)
                  and message.method == "notifications/cancelled"
                  and isinstance(message.params, dict)):
                # A request the client cancelled is never answered (MCP): stop waiting for it.
                self._requests.closed(message.params.get("requestId"))
        return item

    def __aiter__(self) -> DrainingReader:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> DrainingReader:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.aclose()


class AnsweringWriter:
    """The write stream of `stdio_server()`, noting each request it carries the answer of."""

    def __init__(self, inner: Any, requests: OpenRequests) -> None:
        self._inner = inner
        self._requests = requests

    async def send(self, item: SessionMessage, /) -> None:
        await self._inner.send(item)
        if isinstance(item.message, JSONRPCResponse | JSONRPCError):
            self._requests.closed(item.message.id)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> AnsweringWriter:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.aclose()


async def serve_stdio(server: Any, drain_seconds: float = DRAIN_SECONDS) -> None:
    """What `MCPServer.run("stdio")` does, with the wrapped streams."""
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await serve_draining(server, read_stream, write_stream, drain_seconds)


class FrontInput:
    """The client's lines as the front queued them, for `stdio_server(stdin=...)`."""

    def __init__(self, front: StdioFront) -> None:
        self._front = front

    def __aiter__(self) -> FrontInput:
        return self

    async def __anext__(self) -> str:
        line = await anyio.to_thread.run_sync(self._front.inbox.get, abandon_on_cancel=True)
        if line is None:
            self._front.end_input()  # the end stays the end for any later read
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


class FrontOutput:
    """The SDK's answers to the client's end, for `stdio_server(stdout=...)`."""

    def __init__(self, front: StdioFront) -> None:
        self._front = front

    async def write(self, text: str) -> None:
        data = text.encode("utf-8")
        if not self._front.dropped_by_front(data):
            await anyio.to_thread.run_sync(self._front.wire.send, data)

    async def flush(self) -> None:
        """Each write is a whole message, sent as written."""


async def serve_front(server: Any, front: StdioFront,
                      drain_seconds: float = DRAIN_SECONDS) -> None:
    """Serve the client the front has been talking to (stdio_front.py)."""
    from mcp.server.stdio import stdio_server

    async with stdio_server(FrontInput(front), FrontOutput(front)) as (  # type: ignore[arg-type]
            read_stream, write_stream):
        front.sdk_running()
        await serve_draining(server, read_stream, write_stream, drain_seconds)


async def serve_draining(server: Any, read_stream: Any, write_stream: Any,
                         drain_seconds: float = DRAIN_SECONDS) -> None:
    """Serve one connection over a stream pair; its end waits for the open requests."""
    lowlevel = server._lowlevel_server  # the SDK's own stdio runner uses the same server
    requests = OpenRequests()
    await lowlevel.run(
        DrainingReader(read_stream, requests, drain_seconds),
        AnsweringWriter(write_stream, requests),
        lowlevel.create_initialization_options(),
    )
