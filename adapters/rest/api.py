"""FastAPI REST API (SPEC section 7): thin routes over the one MemoryService.

The app a server process runs (config from file + env) is `tinycontext.rest:app`, and
`tinycontext.rest.create_app(container)` builds one over your own container; both are composed
in tinycontext/rest.py. This module only builds the app from what it is given (build_app).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import (
    AbstractAsyncContextManager,
    AsyncExitStack,
    asynccontextmanager,
    contextmanager,
)
from typing import Annotated, Any

from fastapi import Body, FastAPI, Query, Request
from fastapi.responses import JSONResponse
from starlette.routing import BaseRoute

from tinycontext.app.callers import CallerCheck
from tinycontext.app.rendering import PLAIN
from tinycontext.app.service import MemoryService
from tinycontext.app.service_source import Services, warm_up
from tinycontext.app.unexpected import log_unexpected
from tinycontext.domain.errors import InternalError, TinyContextError

from . import errors as rest_errors
from . import models as m
from . import responses as r
from .guard import RequestGuardMiddleware
from .telemetry import FASTAPI_TELEMETRY, RedactRequestSpan

log = logging.getLogger("tinycontext.rest")
# Routes to add and the context the app's lifespan must run them in (see build_app).
Mounted = tuple[list[BaseRoute], Callable[[], AbstractAsyncContextManager[None]]]

# Any operation can meet a store that fails: every route documents these.
STORE_ERRORS = ("store_unavailable", "store_read_only", "store_full", "store_corrupt",
                "store_locked")
ID_ERRORS = ("empty_memory", "memory_not_found", "ambiguous_memory_reference", "invalid_request")
# OpenAPI links: the id a save returns is what get, update and delete take (clients and
# schemathesis' stateful phase follow them).
_SAVED_ID = "$response.body#/saved/0/id"
SAVE_LINKS = {
    "GetSavedMemory": {"operationRef": "#/paths/~1get_memory/post",
                       "requestBody": {"memory_id": _SAVED_ID}},
    "GetSavedMemoryByQuery": {"operationRef": "#/paths/~1get_memory/get",
                              "parameters": {"query.memory_id": _SAVED_ID}},
    "UpdateSavedMemory": {"operationRef": "#/paths/~1update_memory/post",
                          "requestBody": {"memory_id": _SAVED_ID,
                                          "content": "A corrected version of the fact."}},
    "DeleteSavedMemory": {"operationRef": "#/paths/~1delete_memory/post",
                          "requestBody": {"memory_id": _SAVED_ID}},
}


def _errors(*codes: str) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` for these error codes, grouped by HTTP status."""
    by_status: dict[int, list[str]] = {}
    for code in (*codes, *STORE_ERRORS, "internal_error"):
        status, when = rest_errors.ERRORS[code]
        by_status.setdefault(status, []).append(f"`{code}`: {when}")
    by_status.setdefault(rest_errors.MALFORMED, []).append(
        "`invalid_request`: malformed request (not JSON, wrong types, missing or unknown fields)"
    )
    return {
        status: {"model": r.ErrorResponse, "description": "; ".join(lines)}
        for status, lines in sorted(by_status.items())
    }


class _DropRecords(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return False


@contextmanager
def no_access_log() -> Iterator[None]:
    """While the app runs, the ASGI server's access log prints nothing: its request lines
    carry the query string (recall queries, session ids, search words), which are never
    logged. Whoever runs the app (`uvicorn tinycontext.rest:app`, `tinycontext rest`)."""
    dropped = _DropRecords()
    access = logging.getLogger("uvicorn.access")
    access.addFilter(dropped)
    try:
        yield
    finally:
        access.removeFilter(dropped)


def build_app(
    services: Services,
    *,
    hosts: list[str] | None = None,
    on_shutdown: Callable[[], None] | None = None,
    warm: bool = True,
    access: CallerCheck | None = None,
    mounted: Mounted | None = None,
) -> FastAPI:
    """The REST app over the process's Services.

    `hosts` turns on the Host-header check (see guard); `on_shutdown` runs last;
    `warm` loads the embedding model in the background at startup. With a hosted `access`
    (the bootstrap's caller check) every route but /health needs a proxy-proven caller (401
    otherwise, from the check's own gate) and works on that caller's own store. `mounted` is
    another app's routes and the context its lifespan must enter (Streamable HTTP MCP at
    /mcp: `tinycontext.rest.create_app` composes it, so this family never imports the MCP
    one).
    """
    from tinycontext.version import __version__

    get_service: Callable[[], MemoryService] = services.current
    mcp_routes, mcp_running = mounted if mounted is not None else ([], None)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            stack.enter_context(no_access_log())
            if warm:
                warm_up(services)
            if mcp_running is not None:
                await stack.enter_async_context(mcp_running())
            try:
                yield
            finally:
                services.close()
                if on_shutdown is not None:
                    on_shutdown()

    app = FastAPI(
        title="TinyContext",
        version=__version__,
        summary="Token-light, local-first memory for AI agents.",
        description="The six memory operations over HTTP. Errors use the status of the error "
        'table with `{"detail": {"code", "message"}}`; malformed requests get 422.',
        lifespan=lifespan,
        telemetry=FASTAPI_TELEMETRY,
    )
    app.router.routes.extend(mcp_routes)
    app.add_middleware(RequestGuardMiddleware, hosts=hosts)
    if access is not None and access.hosted:
        app.add_middleware(access.gate)  # 401 before anything else
    app.add_middleware(RedactRequestSpan)  # outermost: also spans of refused requests

    rest_errors.install(app)

    @app.exception_handler(TinyContextError)
    async def domain_error(request: Request, exc: TinyContextError) -> JSONResponse:
        return rest_errors.error_response(exc)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        # The route's template, not the path: a path may carry ids the caller typed.
        route = getattr(request.scope.get("route"), "path", "an unknown route")
        log_unexpected(log, f"unexpected error in {request.method} {route}", exc)
        return rest_errors.error_response(InternalError("Unexpected server error."))

    common: dict[str, Any] = {"response_model_exclude_unset": True}

    @app.post("/save_memories", response_model=r.SaveResponse,
              responses={**_errors("empty_memory", "invalid_memory_kind", "invalid_request",
                                   "memory_too_large"),
                         200: {"description": "What was saved and skipped.", "links": SAVE_LINKS}},
              **common)
    def save_memories(body: m.SaveRequest) -> Any:
        """Save memories (one embedding batch); near-duplicates are skipped and reported."""
        items = [item.model_dump(exclude_none=True) for item in body.memories]
        return get_service().save(items, body.session_id).to_dict()

    recall_errors = _errors("recall_budget", "invalid_request", "session_not_found")

    def recall(req: m.RecallRequest) -> Any:
        # The budget counts what REST returns: each memory's content, nothing around it
        # (MCP passes its XML frame instead; see tinycontext/app/rendering.py).
        return get_service().recall(
            req.query, req.session_id, req.max_tokens, req.top_k, req.tags,
            rest_errors.metadata_arg(req.metadata), req.since, req.until, req.as_of,
            framing=PLAIN,
        ).to_dict()

    @app.post("/recall_memories", response_model=r.RecallResponse, responses=recall_errors,
              **common)
    def recall_post(body: Annotated[m.RecallRequest | None, Body()] = None) -> Any:
        """Semantic recall with a query; recent memories without one (no scores then)."""
        return recall(body or m.RecallRequest())

    @app.get("/recall_memories", response_model=r.RecallResponse, responses=recall_errors,
             **common)
    def recall_get(params: Annotated[m.RecallQuery, Query()]) -> Any:
        """The same as POST, with query-string parameters."""
        return recall(params)

    list_errors = _errors(
        "invalid_memory_kind", "invalid_sort", "recall_budget", "invalid_request",
        "session_not_found",
    )

    def browse(req: m.ListRequest) -> Any:
        return get_service().list_page(
            req.session_id, req.kind, req.since, req.until, req.limit, req.offset, req.sort,
            req.search, req.tags, rest_errors.metadata_arg(req.metadata), req.as_of,
        ).to_dict()

    @app.post("/list_memories", response_model=r.ListResponse, responses=list_errors, **common)
    def list_post(body: Annotated[m.ListRequest | None, Body()] = None) -> Any:
        """Browse without ranking or budget: filters, sorting, keyword search, paging."""
        return browse(body or m.ListRequest())

    @app.get("/list_memories", response_model=r.ListResponse, responses=list_errors, **common)
    def list_get(params: Annotated[m.ListQuery, Query()]) -> Any:
        """The same as POST, with query-string parameters."""
        return browse(params)

    @app.post("/get_memory", response_model=r.MemoryDetail, responses=_errors(*ID_ERRORS),
              **common)
    def get_post(body: m.GetRequest) -> Any:
        """One memory in full with its lifecycle fields (not counted as a recall)."""
        return get_service().detail(body.memory_id, body.as_of).to_dict()

    @app.get("/get_memory", response_model=r.MemoryDetail, responses=_errors(*ID_ERRORS),
             **common)
    def get_get(params: Annotated[m.GetRequest, Query()]) -> Any:
        """The same as POST, with the id or ref as a query parameter."""
        return get_service().detail(params.memory_id, params.as_of).to_dict()

    @app.post("/update_memory", response_model=r.UpdateResponse,
              responses=_errors(*ID_ERRORS, "memory_already_superseded", "memory_too_large"),
              **common)
    def update_memory(body: m.UpdateRequest) -> Any:
        """Replace a memory's content with a new version; the old one is kept, hidden."""
        return get_service().update(
            body.memory_id, body.content, body.tags, body.metadata).to_dict()

    @app.post("/delete_memory", response_model=r.DeleteResponse, responses=_errors(*ID_ERRORS),
              **common)
    def delete_memory(body: m.MemoryIdRequest) -> Any:
        """Delete a memory for good; an older version it replaced becomes current again."""
        return get_service().delete(body.memory_id).to_dict()

    @app.get("/health", response_model=r.Health)
    def health() -> Any:
        """Liveness: answers without touching the store or the model."""
        return {"status": "ok", "version": __version__}

    return app
