"""Management views as MCP resources, with the access rules of SPEC section 8.

- stdio: the local operator; every view.
- hosted: the proxy-proven caller opens the Memories and Overview views of their own store;
  the Service view also needs `Authorization: Bearer <TINYCONTEXT_MANAGEMENT_TOKEN>`.
- HTTP without hosted mode: every management read needs that Bearer token.
Resources a caller may not read are left out of their resource lists, and reading one is a
JSON-RPC error whose message starts with `unauthorized:`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import MCPServer

from tinycontext.app import management as views
from tinycontext.app.management import (
    BASE,
    DETAIL_TEMPLATE,
    MANIFEST_URI,
    MEDIA_TYPE,
    MEMORIES_TEMPLATE,
    MEMORIES_URI,
    OVERVIEW_URI,
    SERVICE_URI,
    Management,
)
from tinycontext.app.request_scope import Caller, current_scope
from tinycontext.app.service import MemoryService
from tinycontext.domain.errors import TinyContextError, UnauthorizedError

from .errors import UNAUTHORIZED, rpc_error

VIEWS: list[dict[str, Any]] = [
    {"id": "memories", "title": "Memories", "kind": "table", "access": "caller",
     "description": "Your memories, newest first; keyword search (best match first), type, "
     "order and tag filters, paging, and the full text of each. Edit and delete with the "
     "update_memory and delete_memory tools.",
     "uri": MEMORIES_URI, "uri_template": MEMORIES_TEMPLATE,
     "parameters": [
         {"name": "page", "type": "integer", "default": 1, "minimum": 1},
         {"name": "page_size", "type": "integer", "default": views.DEFAULT_PAGE_SIZE,
          "minimum": 1, "maximum": views.MAX_PAGE_SIZE},
         {"name": "search", "type": "string", "max_length": 200,
          "description": "keywords that must all appear; each may be a prefix"},
         {"name": "kind", "type": "string", "enum": ["episodic", "profile"]},
         {"name": "order", "type": "string", "enum": ["recent", "stale", "relevance"],
          "default": "recent; relevance when search is given"},
         {"name": "session", "type": "string"},
         {"name": "tags", "type": "string",
          "description": "comma-separated tags that must all be present"},
     ],
     "columns": views.COLUMNS,
     "detail": {"uri_template": DETAIL_TEMPLATE, "key": "id"},
     "actions": views.ACTIONS},
    {"id": "overview", "title": "Overview", "kind": "summary", "access": "caller",
     "description": "How many memories of each type, which were never recalled, and the "
     "time span they cover.", "uri": OVERVIEW_URI},
    {"id": "service", "title": "Service", "kind": "summary", "access": "operator",
     "description": "Operators only: store count, disk use and the embedding setup.",
     "uri": SERVICE_URI},
]


def view_of(uri: str) -> str | None:
    """The view a management URI belongs to (None: not a management URI)."""
    if not uri.startswith(BASE + "/"):
        return None
    name = uri[len(BASE) + 1:].split("?", 1)[0].split("/", 1)[0]
    return name or "manifest"


def may_read(view: str, caller: Caller | None, hosted: bool) -> bool:
    if caller is None:
        return False
    if caller.local:
        return True
    if view == "service":
        return caller.operator
    if hosted:
        return caller.user_id is not None
    return caller.operator


def _caller() -> Caller | None:
    scope = current_scope()
    return scope.caller if scope is not None else None


def _dump(document: dict[str, Any]) -> str:
    return json.dumps(document, ensure_ascii=False, indent=1)


def _read(build: Callable[[], dict[str, Any]]) -> str:
    try:
        return _dump(build())
    except TinyContextError as exc:
        # A store that fails is the server's problem, not the caller's parameters (KIND).
        raise rpc_error(exc) from None


def manifest(management: Management, caller: Caller | None) -> dict[str, Any]:
    from tinycontext.version import __version__

    return {
        "contract": views.CONTRACT, "media_type": MEDIA_TYPE,
        "service": {"name": "tinycontext", "title": "TinyContext memory",
                    "version": __version__},
        "mode": "hosted" if management.hosted else "single-user",
        "scope": "own-store",
        "views": [
            {**view, "media_type": MEDIA_TYPE,
             "available": may_read(view["id"], caller, management.hosted)}
            for view in VIEWS
        ],
    }


class ManagementGuard:
    """Refuses management reads the current caller may not make; filters resource lists."""

    def __init__(self, management: Management) -> None:
        self.hosted = management.hosted

    def check(self, uri: str) -> None:
        view = view_of(uri)
        if view is None or may_read(view, _caller(), self.hosted):
            return
        need = ("the operator token (Authorization: Bearer)" if view == "service" or not
                self.hosted else "a proven caller")
        raise rpc_error(UnauthorizedError(f"the {view} view needs {need}."), UNAUTHORIZED)

    def visible(self, uri: str) -> bool:
        view = view_of(uri)
        return view is None or may_read(view, _caller(), self.hosted)


def register_management(
    server: MCPServer[Any], get_service: Callable[[], MemoryService], management: Management
) -> ManagementGuard:
    """Add the manifest and the views to an MCPServer; returns the access guard."""
    common: dict[str, Any] = {"mime_type": MEDIA_TYPE}

    @server.resource(MANIFEST_URI, name="manage-manifest", title="Management manifest",
                     description=f"The {views.CONTRACT} manifest: the views this server "
                     "offers and whether you may open them.", **common)
    def manage_manifest() -> str:
        return _dump(manifest(management, _caller()))

    @server.resource(MEMORIES_TEMPLATE, name="manage-memories", title="Memories",
                     description=VIEWS[0]["description"], **common)
    def manage_memories(page: str | None = None, page_size: str | None = None,
                        search: str | None = None, kind: str | None = None,
                        order: str | None = None, session: str | None = None,
                        tags: str | None = None) -> str:
        return _read(lambda: views.memories_view(get_service(), page, page_size, search,
                                                 kind, order, session, tags))

    @server.resource(DETAIL_TEMPLATE, name="manage-memory", title="Memory detail",
                     description="One memory in full with its lifecycle.", **common)
    def manage_memory(memory_id: str) -> str:
        return _read(lambda: views.memory_detail_view(get_service(), memory_id))

    @server.resource(OVERVIEW_URI, name="manage-overview", title="Overview",
                     description=VIEWS[1]["description"], **common)
    def manage_overview() -> str:
        return _read(lambda: views.overview_view(get_service()))

    @server.resource(SERVICE_URI, name="manage-service", title="Service",
                     description=VIEWS[2]["description"], **common)
    def manage_service() -> str:
        return _read(lambda: views.service_view(get_service(), management))

    return ManagementGuard(management)
