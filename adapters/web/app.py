"""The memory browser's Starlette app: routes, forms and error pages. Every read and change
goes through queries.py (the service's own operations); this module only turns requests into
calls and results into pages."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from tinycontext.app.request_scope import current_scope
from tinycontext.app.service_source import Services
from tinycontext.app.unexpected import log_unexpected
from tinycontext.domain.errors import InternalError, InvalidRequestError, TinyContextError

from . import queries
from .render import Renderer
from .security import CSRF_FIELD, UiGuard, csrf_ok

log = logging.getLogger("tinycontext.ui")
HERE = Path(__file__).parent
MAX_FORM_BYTES = 256 * 1024  # a memory is at most 8,000 tokens: well under this
# The HTTP status each error code is shown with (the page says the code and the message).
STATUS = {"session_not_found": 404, "memory_not_found": 404, "ambiguous_memory_reference": 409,
          "memory_already_superseded": 409, "memory_too_large": 413, "unauthorized": 401,
          "store_unavailable": 503, "store_read_only": 503, "store_full": 507,
          "store_corrupt": 500, "store_locked": 503, "internal_error": 500}
NOTICES = {"updated": "Saved as a new version; the old one is kept in the history below.",
           "deleted": "Memory deleted.", "restored": "Memory deleted; the older version it "
           "had replaced is live again."}


def _text(request: Request, name: str) -> str | None:
    value = request.query_params.get(name, "").strip()
    return value or None


def _number(request: Request, name: str, default: int | None, low: int = 1) -> int | None:
    raw = _text(request, name)
    if raw is None:
        return default
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 9 or int(raw) < low:
        raise InvalidRequestError(f"{name} must be a whole number of at least {low}.")
    return int(raw)


def create_ui_app(services: Services, *, token: str | None = None, hosts: list[str] | None = None,
                  hosted: bool = False) -> UiGuard:
    """The pages over the process's Services (one service, or hosted mode's per-user ones).

    `token`: the per-start access token (local mode; None when a tenancy gate in front proves
    callers); `hosts`: accepted Host names (None: no check)."""
    get_service = services.current
    render = Renderer(HERE / "templates")

    def operator() -> bool:
        scope = current_scope()  # hosted mode: the gate's caller; local: the machine's owner
        return scope.caller.operator if scope is not None else not hosted

    def page(request: Request, name: str, status: int = 200, **values: Any) -> HTMLResponse:
        return HTMLResponse(render(request, name, **values), status_code=status)

    def failed(request: Request, exc: Exception) -> Response:
        """The error page of every route; call it only inside the `except` (it logs the
        unexpected error's traceback, never shows it)."""
        if isinstance(exc, TinyContextError):
            return page(request, "error.html", STATUS.get(exc.code, 400), error=exc)
        log_unexpected(log, "unexpected error in the memory browser", exc)
        return page(request, "error.html", 500, error=InternalError("Unexpected server error."))

    def guarded(handler: Callable[[Request], Response]) -> Callable[[Request], Response]:
        def run(request: Request) -> Response:
            try:
                return handler(request)
            except Exception as exc:
                return failed(request, exc)
        return run

    def guarded_post(
        handler: Callable[[Request], Awaitable[Response]],
    ) -> Callable[[Request], Awaitable[Response]]:
        # The form routes are async (they read the body); the same errors, the same pages.
        async def run(request: Request) -> Response:
            try:
                return await handler(request)
            except Exception as exc:
                return failed(request, exc)
        return run

    def overview(request: Request) -> Response:
        return page(request, "overview.html", data=queries.overview(get_service(), operator()))

    def memories(request: Request) -> Response:
        filters = {k: _text(request, k)
                   for k in ("session", "kind", "since", "until", "sort", "tags", "as_of")}
        search = _text(request, "q")
        superseded = request.query_params.get("show") == "superseded"
        number = _number(request, "page", 1) or 1
        service = get_service()
        data = queries.memories_page(service, search=search, superseded=superseded,
                                     page=number, **filters)
        return page(request, "memories.html", data=data, filters=filters, search=search,
                    sessions=queries.sessions(service),
                    superseded=superseded, notice=NOTICES.get(request.query_params.get("done",
                                                                                          "")))

    def ask(request: Request) -> Response:
        question = _text(request, "q")
        session = _text(request, "session")
        top_k, budget = _number(request, "top_k", None), _number(request, "max_tokens", None)
        service = get_service()
        data = queries.ask(service, question, session, top_k, budget) if question else None
        return page(request, "ask.html", data=data, question=question, session=session,
                    sessions=queries.sessions(service),
                    top_k=top_k, max_tokens=budget)

    def detail(request: Request) -> Response:
        as_of = _text(request, "as_of")
        data = queries.detail(get_service(), request.path_params["memory_id"], as_of)
        return page(request, "detail.html", data=data, as_of=as_of,
                    notice=NOTICES.get(request.query_params.get("done", "")))

    def confirm_delete(request: Request) -> Response:
        data = queries.detail(get_service(), request.path_params["memory_id"])
        return page(request, "delete.html", data=data)

    async def form(request: Request) -> dict[str, str]:
        body = await request.body()
        if len(body) > MAX_FORM_BYTES:
            raise InvalidRequestError("The form is too large.")
        fields = dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
        if not csrf_ok(request.scope, fields.get(CSRF_FIELD)):
            raise InvalidRequestError("The form's security token is missing or stale: reload "
                                      "the page and try again.")
        return fields

    def base(request: Request) -> str:
        return str(request.scope.get("root_path", ""))

    async def edit(request: Request) -> Response:
        fields = await form(request)
        memory_id = request.path_params["memory_id"]
        content = fields.get("content", "")
        tags = fields.get("tags")
        result = await _threaded(
            lambda: queries.update(get_service(), memory_id, content, tags))
        return RedirectResponse(f"{base(request)}/memory/{quote(result['id'])}?done=updated",
                                status_code=303)

    async def delete(request: Request) -> Response:
        await form(request)
        memory_id = request.path_params["memory_id"]
        result = await _threaded(lambda: queries.delete(get_service(), memory_id))
        done = "restored" if result.get("restored") else "deleted"
        return RedirectResponse(f"{base(request)}/memories?done={done}", status_code=303)

    def export(request: Request) -> Response:
        return page(request, "export.html")

    def download(request: Request) -> Response:
        session = _text(request, "session")
        service = get_service()
        queries.check_session(service, session)
        with_vectors = request.query_params.get("embeddings") == "1"
        name = "tinycontext-export" + ("-session" if session else "") + ".jsonl"
        return StreamingResponse(
            queries.export_lines(service, session, with_vectors),
            media_type="application/x-ndjson",
            headers={"content-disposition": f'attachment; filename="{name}"'})

    routes = [
        Route("/", guarded(overview)),
        Route("/memories", guarded(memories)),
        Route("/ask", guarded(ask)),
        Route("/memory/{memory_id}", guarded(detail)),
        Route("/memory/{memory_id}/delete", guarded(confirm_delete)),
        Route("/memory/{memory_id}/edit", guarded_post(edit), methods=["POST"]),
        Route("/memory/{memory_id}/delete", guarded_post(delete), methods=["POST"]),
        Route("/export", guarded(export)),
        Route("/export/download", guarded(download)),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    return UiGuard(Starlette(routes=routes), token=token, hosts=hosts)


async def _threaded(fn: Callable[[], Any]) -> Any:
    """Service calls block (SQLite, the model): run them off the event loop."""
    from starlette.concurrency import run_in_threadpool

    return await run_in_threadpool(fn)
