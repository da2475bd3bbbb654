"""What telemetry may carry out of the process: an allow-list of attributes and span names.

Spans and metric points come from TinyContext, from FastAPI's own OpenTelemetry support (HTTP
server spans with `url.path`/`url.query`, request metrics) and from the MCP SDK (message
spans whose status text may quote a client's input). Rather than chasing every attribute an
instrumentation might add (`url.query`, `url.full`, `http.target`, captured headers, ...),
only the keys listed here leave the process, each with a check of its value; everything else,
events (exception messages, stack traces) and status descriptions are dropped. Pure Python:
no OpenTelemetry import, so the REST app can use it at the source too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

OPERATIONS = frozenset({"save_memories", "recall_memories", "list_memories", "get_memory",
                        "update_memory", "delete_memory"})
HTTP_METHODS = frozenset({"CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT",
                          "QUERY", "TRACE", "_OTHER"})
# MCP message methods (protocol vocabulary): a client may send any method name, so a name
# outside this list is not exported.
MCP_METHODS = frozenset({
    "initialize", "ping", "tools/list", "tools/call", "resources/list", "resources/read",
    "resources/templates/list", "resources/subscribe", "resources/unsubscribe", "prompts/list",
    "prompts/get", "completion/complete", "logging/setLevel", "roots/list",
    "sampling/createMessage", "elicitation/create", "server/discover", "subscriptions/listen",
    "tasks/get", "tasks/list", "tasks/result", "tasks/cancel", "notifications/initialized",
    "notifications/cancelled", "notifications/progress", "notifications/message",
    "notifications/roots/list_changed", "notifications/resources/list_changed",
    "notifications/resources/updated", "notifications/tools/list_changed",
    "notifications/prompts/list_changed", "notifications/elicitation/complete",
    "notifications/subscriptions/acknowledged", "notifications/tasks/status",
})

_IDENTIFIER = re.compile(r"[a-z][a-z0-9_.]{0,63}")
_ENUM = re.compile(r"[a-z][a-z_]{0,31}")
_ERROR = re.compile(r"[A-Za-z0-9_.\-]{1,128}")
_MODEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:+\-]{0,127}")
_ROUTE = re.compile(r"/[A-Za-z0-9_\-./{}:]{0,199}")
_CODE = re.compile(r"[A-Za-z_][A-Za-z0-9_.<>]{0,199}")
_OWN_SPAN = re.compile(r"(tinycontext|fastapi)\.[a-z_.]{1,64}")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float))  # bool is an int: flags pass


def _text(pattern: re.Pattern[str]) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, str) and pattern.fullmatch(value) is not None


def _one_of(*choices: frozenset[str]) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, str) and any(value in c for c in choices)


def _ours(value: Any) -> bool:
    """Our own attributes: counts, flags and enum words (modes, sorts), never free text."""
    return _number(value) or _text(_ENUM)(value)


ALLOWED: dict[str, Callable[[Any], bool]] = {
    # TinyContext (telemetry_wrappers)
    "gen_ai.operation.name": _text(_IDENTIFIER),
    "gen_ai.memory.record.count": _number,
    "gen_ai.request.model": _text(_MODEL),
    "error.type": _text(_ERROR),
    # HTTP server spans and metrics (FastAPI): the route template, never the path or query
    "http.request.method": _one_of(HTTP_METHODS),
    "http.route": _text(_ROUTE),
    "http.response.status_code": _number,
    "url.scheme": _one_of(frozenset({"http", "https", "ws", "wss"})),
    "network.protocol.name": _one_of(frozenset({"http", "websocket"})),
    "network.protocol.version": _text(re.compile(r"[0-9.]{1,5}")),
    "code.function.name": _text(_CODE),
    # MCP SDK message spans: protocol method, our tool names, JSON-RPC error codes
    "mcp.method.name": _one_of(MCP_METHODS),
    "mcp.protocol.version": _text(re.compile(r"\d{4}-\d{2}-\d{2}")),
    "gen_ai.tool.name": _one_of(OPERATIONS),
    "rpc.response.status_code": _text(re.compile(r"-?\d{1,6}")),
}
OWN_PREFIX = "tinycontext."
# Keys whose values are never exported, whatever their shape (documentation and tests).
# server.address/port come from the client's Host header.
NEVER = ("url.query", "url.full", "url.path", "http.target", "http.url", "http.request.header.*",
         "server.address", "server.port", "client.address", "user_agent.original",
         "jsonrpc.request.id")


def allowed(key: str, value: Any) -> bool:
    """Whether attribute `key` with `value` may be exported."""
    check = ALLOWED.get(key)
    if check is None:
        check = _ours if key.startswith(OWN_PREFIX) else None
    if check is None:
        return False
    if isinstance(value, (list, tuple)):
        return False  # no instrumentation we ship sets sequences; headers come as sequences
    return bool(check(value))


def safe_attributes(attributes: Mapping[str, Any] | None) -> dict[str, Any]:
    """The allowed subset of `attributes` (a new dict)."""
    return {k: v for k, v in (attributes or {}).items() if allowed(k, v)}


def _name_part(part: str, route: Any) -> bool:
    return (part in HTTP_METHODS or part in MCP_METHODS or part in OPERATIONS
            or part in ("HTTP", "WS", "MCP", "send") or part == route
            or _OWN_SPAN.fullmatch(part) is not None)


def safe_span_name(name: str, attributes: Mapping[str, Any] | None) -> str:
    """The span name, cut before the first word that is not protocol vocabulary.

    "GET /recall_memories" stays (the route is the span's own allowed `http.route`);
    "tools/call save_memories" stays; a tool or method name a client made up is cut off.
    """
    route = (attributes or {}).get("http.route")
    route = route if allowed("http.route", route) else None
    kept: list[str] = []
    for part in name.split(" "):
        if not _name_part(part, route):
            break
        kept.append(part)
    return " ".join(kept) or "span"
