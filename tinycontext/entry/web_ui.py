"""Composing the memory browser (adapters/web): standalone for `tinycontext ui`, or at /ui in
front of the REST or Streamable HTTP MCP app (`--ui`).

Local mode guards the pages with a random per-start token (the printed link); hosted mode puts
them behind the same tenancy gate as REST and MCP, so each proven user sees only their own
store and no token is involved.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

    from tinycontext.app.callers import CallerCheck
    from tinycontext.app.service_source import Services

UI_PATH = "/ui"


def ui_app(services: Services, *, hosts: list[str] | None, access: CallerCheck | None = None,
           token: str | None = None) -> ASGIApp:
    """The pages over `services`; behind the tenancy gate when `access` is hosted mode's."""
    from tinycontext.adapters.web.app import create_ui_app

    hosted = access is not None and access.hosted  # a tinycontext.app.callers.CallerCheck
    app: ASGIApp = create_ui_app(services, token=None if hosted else token, hosts=hosts,
                                 hosted=hosted)
    if access is not None and hosted:
        return access.gate(app)  # 401 before anything runs; the caller's RequestScope
    if token is None:
        raise ValueError("local mode needs the per-start access token")
    return app


def mount_ui(app: ASGIApp, ui: ASGIApp) -> ASGIApp:
    """`app` with `ui` answering under /ui (the path kept whole, /ui added to root_path, as a
    Starlette Mount does); lifespan and every other path go to `app`."""

    async def dispatch(scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if path == UI_PATH or path.startswith(UI_PATH + "/"):
            if path == UI_PATH:  # the pages' links are relative to /ui/
                scope = {**scope, "path": UI_PATH + "/"}
            await ui({**scope, "root_path": scope.get("root_path", "") + UI_PATH},
                     receive, send)
            return
        await app(scope, receive, send)

    return dispatch


def ui_link(host: str, port: int, token: str | None, prefix: str = "") -> str:
    """The address to open: loopback name, port, and the token that signs the browser in."""
    shown = "127.0.0.1" if host in ("", "0.0.0.0") else (f"[{host}]" if ":" in host else host)
    link = f"http://{shown}:{port}{prefix}/"
    return f"{link}?token={token}" if token else link
