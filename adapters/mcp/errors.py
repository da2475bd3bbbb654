"""How MCP reports an error, in one place. The domain's errors carry codes only; this is MCP's
side of SPEC's error table.

A tool's error is the text `code: message` (a tool result with isError set). A JSON-RPC error
(management resources, a refused caller) carries the same text, `{"code": code}` as data, and
a kind that says whose fault it is: the store's and the server's own failures are
INTERNAL_ERROR, everything else the caller's parameters; a caller the proxy did not prove is
refused with UNAUTHORIZED.
"""

from __future__ import annotations

from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS

from tinycontext.domain.errors import ERROR_CODES, InternalError, TinyContextError

UNAUTHORIZED = -32001  # JSON-RPC server-defined range
SERVER_FAULTS = frozenset(
    {"store_unavailable", "store_read_only", "store_full", "store_corrupt", "store_locked",
     "internal_error"}
)
KIND: dict[str, int] = {
    code: INTERNAL_ERROR if code in SERVER_FAULTS else INVALID_PARAMS for code in ERROR_CODES
}
# What a tool says when something unexpected failed (the traceback goes to the log only).
UNEXPECTED = InternalError(
    "the memory server hit an unexpected error; details are in its log. Retrying may help."
)


def error_text(exc: TinyContextError) -> str:
    return f"{exc.code}: {exc.message}"


def tool_error(exc: TinyContextError) -> ToolError:
    return ToolError(error_text(exc))


def rpc_error(exc: TinyContextError, kind: int | None = None) -> MCPError:
    return MCPError(KIND[exc.code] if kind is None else kind, error_text(exc), {"code": exc.code})
