"""Every REST error in one shape: `{"detail": {"code", "message"}}` (docs/reference/rest.md).

FastAPI answers framework-level failures in its own shapes: a list for validation errors, a
string for an unknown path, a wrong method, or a body it cannot decode (invalid UTF-8, JSON
nested too deeply, a number too long to convert). These handlers give them the documented
shape with the `invalid_request` code and keep their statuses: 422 for a malformed request
(the body-decoding failures included, as for any other body that is not JSON), 404 for an
unknown path, 405 with an `Allow` header naming every method of the path. OPTIONS on a known
path answers 204 with that `Allow` header.

ERRORS is the REST side of SPEC's error table: the HTTP status of every domain error code
(the domain's errors carry codes only), and when it happens, for the OpenAPI document.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException
from starlette.routing import Match

from tinycontext.domain.errors import TinyContextError

MALFORMED = 422
MAX_PROBLEMS = 5

ERRORS: dict[str, tuple[int, str]] = {
    "empty_memory": (400, "blank content or id, or an empty memories list"),
    "invalid_memory_kind": (400, "kind is not episodic or profile"),
    "invalid_sort": (400, "unknown sort, or relevance without search"),
    "recall_budget": (400, "top_k, max_tokens or limit below 1, or offset below 0"),
    "invalid_request": (400, "malformed dates, over-long query or search, too many items, other "
                        "bad input"),
    "session_not_found": (404, "a session_id that no save ever used"),
    "memory_not_found": (404, "no memory has that id or ref"),
    "ambiguous_memory_reference": (409, "a ref matching several memories (pass the full id)"),
    "memory_already_superseded": (409, "updating a memory a newer version already replaced"),
    "memory_too_large": (413, "content over max_memory_tokens (split it into smaller memories)"),
    "unauthorized": (401, "hosted mode: a request the authenticating proxy did not prove"),
    "store_unavailable": (503, "the store cannot be opened or reached (folder or file "
                          "permissions, locked by another process beyond the timeout, database "
                          "down or refusing the login)"),
    "store_read_only": (503, "a write to a read-only store (recall still works, without "
                        "counting)"),
    "store_full": (507, "no disk space left for the store"),
    "store_corrupt": (500, "the store file is damaged (the message says how to salvage it)"),
    "store_locked": (503, "the store is encrypted and the configured key does not open it (or "
                     "a key is set for a store that is not encrypted)"),
    "internal_error": (500, "anything unexpected (no details are returned)"),
}


def error_body(code: str, message: str) -> dict[str, Any]:
    return {"detail": {"code": code, "message": message}}


def error_response(exc: TinyContextError) -> JSONResponse:
    """A domain error as REST answers it: the status of its code, the documented shape."""
    return JSONResponse(status_code=ERRORS[exc.code][0], content=error_body(exc.code, exc.message))


def describe_validation(errors: Any) -> str:
    """`where: what` for the first few problems; never the input itself (it may be content)."""
    parts = []
    for item in list(errors)[:MAX_PROBLEMS]:
        loc = [str(p) for p in item.get("loc", ())]
        where = ".".join(loc[1:] if len(loc) > 1 else loc) or "request"
        if item.get("type") == "json_invalid":
            parts.append(f"the body is not valid JSON ({item.get('ctx', {}).get('error', '')})")
        elif item.get("type") == "extra_forbidden":
            parts.append(f"{where}: unknown field or parameter")
        else:
            parts.append(f"{where}: {item.get('msg', 'invalid')}")
    more = len(list(errors)) - MAX_PROBLEMS
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "") + "."


def _unreadable_body(cause: BaseException | None) -> str:
    if isinstance(cause, UnicodeDecodeError):
        return "The body is not valid UTF-8: send JSON encoded as UTF-8."
    if isinstance(cause, RecursionError):
        return "The body's JSON is nested too deeply: send the flat objects the API documents."
    return "The body could not be read as JSON: send a JSON object as the API documents."


def allowed_methods(app: FastAPI, scope: MutableMapping[str, Any]) -> list[str]:
    """Every method some route serves on this path (FastAPI keeps GET and POST of one path in
    two routes, and Starlette's own 405 names only the first one's)."""
    methods: set[str] = set()
    for route in app.router.routes:
        match, _ = route.matches({**scope, "method": "GET"})
        route_methods = getattr(route, "methods", None)
        if match != Match.NONE and route_methods:
            methods.update(route_methods)
    if methods:
        methods.add("OPTIONS")
    return sorted(methods)


def install(app: FastAPI) -> None:
    """Register the handlers on `app` (domain errors: error_response, in the app)."""

    @app.exception_handler(RequestValidationError)
    async def malformed(request: Request, exc: RequestValidationError) -> JSONResponse:
        message = "Malformed request: " + describe_validation(exc.errors())
        return JSONResponse(status_code=MALFORMED, content=error_body("invalid_request", message))

    @app.exception_handler(HTTPException)
    async def framework(request: Request, exc: HTTPException) -> Response:
        if exc.status_code == 400 and exc.__cause__ is not None:
            # FastAPI's "There was an error parsing the body": a body that is not JSON.
            return JSONResponse(status_code=MALFORMED, content=error_body(
                "invalid_request", _unreadable_body(exc.__cause__)))
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            allow = allowed_methods(app, request.scope)
            headers["Allow"] = ", ".join(allow)
            if request.method == "OPTIONS" and allow:
                return Response(status_code=204, headers=headers)
            message = (f"{request.method} is not allowed on {request.url.path[:100]}; use "
                       f"{' or '.join(m for m in allow if m not in ('HEAD', 'OPTIONS'))}.")
        elif exc.status_code == 404:
            message = (f"There is no {request.url.path[:100]}; the OpenAPI document at "
                       "/openapi.json lists the paths.")
        else:
            message = str(exc.detail)
        return JSONResponse(status_code=exc.status_code, headers=headers,
                            content=error_body("invalid_request", message))


def metadata_arg(value: object) -> Any:
    """A metadata filter as the engine takes it: query strings carry it as JSON text; text
    that is not a JSON object is invalid_request (the engine names what is wrong)."""
    if not isinstance(value, str):
        return value
    if not value.strip():  # an empty query parameter, as forms send it: no filter
        return None
    import json

    from tinycontext.domain.errors import InvalidRequestError

    try:
        return json.loads(value)
    except ValueError:
        raise InvalidRequestError(
            'metadata must be a JSON object such as {"project": "billing"}.') from None
