"""The memory browser's guard (ASGI middleware): Host allow-list, the per-start access token,
same-origin checks for changes, and the security headers of every response.

Local mode: `tinycontext ui` prints a URL carrying a random token; the first request with it
gets the token as a cookie (HttpOnly, SameSite=Strict) and is redirected to the same page
without it, so the token leaves the address bar and the history. Anything without the
cookie gets 401. Hosted mode has no token: the tenancy gate in front proves the caller.

Changes (POST) need both an Origin (or Referer) naming this very host and a CSRF token: a
form field equal to a second cookie (double submit). A cross-site page can make the browser
send a POST, but it can neither read that cookie nor make the browser claim our origin.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

from tinycontext.config.allowed_hosts import host_allowed

Scope = MutableMapping[str, Any]
CSRF_FIELD = "csrf"
# No inline script or style anywhere: the one script and stylesheet are static files.
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
       "form-action 'self'; frame-ancestors 'none'; base-uri 'none'; connect-src 'self'")
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
]
UNAUTHORIZED = (
    "<!doctype html><html lang=en><meta charset=utf-8><title>TinyContext: not signed in</title>"
    "<h1>Open the link the command printed</h1><p>This memory browser needs the access link "
    "that <code>tinycontext ui</code> printed when it started (it carries an access token "
    "that works until the command stops). Restarting the command prints a new link.</p></html>"
)


def new_token() -> str:
    """A random access token for one start of the server."""
    return secrets.token_urlsafe(24)


def cookie_names(scope: Scope) -> tuple[str, str]:
    """Cookies are per host, not per port: two servers on one machine must not share them."""
    server = scope.get("server") or ("", 0)
    return f"tinycontext_ui_{server[1]}", f"tinycontext_csrf_{server[1]}"


def read_cookies(scope: Scope) -> dict[str, str]:
    jar: SimpleCookie = SimpleCookie()
    for key, value in scope.get("headers") or ():
        if key == b"cookie":
            try:
                jar.load(value.decode("latin-1"))
            except Exception:  # noqa: BLE001 - a malformed cookie header is just no cookie
                continue
    return {name: morsel.value for name, morsel in jar.items()}


def _header(scope: Scope, name: bytes) -> str | None:
    values = [v for k, v in scope.get("headers") or () if k == name]
    return values[0].decode("latin-1") if len(values) == 1 else None


def same_origin(scope: Scope) -> bool:
    """Whether Origin (or, without one, Referer) names the host this request was sent to."""
    host = _header(scope, b"host")
    claimed = _header(scope, b"origin") or _header(scope, b"referer")
    if not host or not claimed or claimed == "null":
        return False
    return urlsplit(claimed).netloc.lower() == host.lower()


def csrf_ok(scope: Scope, submitted: str | None) -> bool:
    expected = read_cookies(scope).get(cookie_names(scope)[1])
    return bool(expected and submitted) and hmac.compare_digest(
        str(expected).encode(), str(submitted).encode())


def _cookie(name: str, value: str, path: str) -> tuple[bytes, bytes]:
    return (b"set-cookie",
            f"{name}={value}; Path={path or '/'}; HttpOnly; SameSite=Strict".encode())


async def _plain(send: Any, status: int, body: str, extra: list[tuple[bytes, bytes]]) -> None:
    data = body.encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/html; charset=utf-8"),
                            (b"content-length", str(len(data)).encode()), *HEADERS, *extra]})
    await send({"type": "http.response.body", "body": data})


def same_origin_path(path: str) -> str:
    """`path` as a redirect target a browser reads as a path on this site: one leading slash
    (`//host/...` or `/\\host/...` would send it to another site), percent-encoded."""
    return "/" + quote(path.lstrip("/\\"), safe="/:@!$&'()*+,;=-._~")


class UiGuard:
    """Refuses what must not reach a page; adds the headers every page needs."""

    def __init__(self, app: Any, *, token: str | None, hosts: list[str] | None) -> None:
        self.app, self.token, self.hosts = app, token, hosts

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.hosts is not None and not host_allowed(_header(scope, b"host"), self.hosts):
            await _plain(send, 421, "Host not allowed: open the address the command printed.", [])
            return
        auth_name, csrf_name = cookie_names(scope)
        cookies = read_cookies(scope)
        root = scope.get("root_path", "")
        extra: list[tuple[bytes, bytes]] = []
        if self.token is not None:
            query = parse_qsl(scope.get("query_string", b"").decode("latin-1"))
            given = dict(query).get("token")
            if given is not None and scope["method"] == "GET" and _same(given, self.token):
                rest = urlencode([(k, v) for k, v in query if k != "token"])
                path = scope.get("path", "/")
                # Mounted apps see the full path (root_path included); join it only if not.
                path = path if path.startswith(root) else root + path
                location = same_origin_path(path) + (f"?{rest}" if rest else "")
                await _plain(send, 303, "", [(b"location", location.encode()),
                                             _cookie(auth_name, self.token, root)])
                return
            if not _same(cookies.get(auth_name, ""), self.token):
                await _plain(send, 401, UNAUTHORIZED, [])
                return
        if scope["method"] not in ("GET", "HEAD") and not same_origin(scope):
            await _plain(send, 403, "Refused: this change did not come from this page "
                         "(Origin/Referer check).", [])
            return
        if csrf_name not in cookies:
            fresh = secrets.token_urlsafe(24)
            scope.setdefault("state", {})["csrf"] = fresh
            extra.append(_cookie(csrf_name, fresh, root))
        else:
            scope.setdefault("state", {})["csrf"] = cookies[csrf_name]

        async def with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *HEADERS, *extra]
            await send(message)

        await self.app(scope, receive, with_headers)


def _same(given: str, expected: str) -> bool:
    return hmac.compare_digest(given.encode(), expected.encode())
