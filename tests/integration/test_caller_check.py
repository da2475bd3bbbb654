"""The HTTP transports take the caller check the bootstrap passes in (tinycontext.app.callers)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tinycontext.adapters.hosting.tenancy import Access, ProxyTrust, TenantGate
from tinycontext.app.callers import CallerCheck, LocalCallers, Refused
from tinycontext.app.request_scope import Caller


class TeapotCheck:
    """A check of our own: hosted, and its gate answers everything with 418."""

    hosted = True

    def caller(self, scope: Any) -> Caller:
        raise Refused("never proven")

    def gate(self, app: Any) -> Any:
        async def teapot(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            await send({"type": "http.response.start", "status": 418, "headers": []})
            await send({"type": "http.response.body", "body": b""})

        return teapot


def test_local_callers_match_access_without_settings() -> None:
    local, access = LocalCallers(), Access()
    for scope in (None, {"type": "http", "headers": [(b"authorization", b"Bearer x" * 4)]}):
        assert local.caller(scope) == access.caller(scope)
    assert local.hosted is access.hosted is False
    app = object()
    assert local.gate(app) is app and access.gate(app) is app


def test_hosted_access_gates_with_its_own_gate() -> None:
    checks: list[CallerCheck] = [Access(ProxyTrust((), b"t" * 32)), LocalCallers()]
    assert isinstance(checks[0].gate(object()), TenantGate)


def _service(tmp_path: Path) -> Any:
    from tinycontext.config.engine import TinyContextConfig
    from tinycontext.entry.container import build_service
    from tinycontext.testing import HashEmbedder

    return build_service(TinyContextConfig(memory_db_path=str(tmp_path / "m.db")),
                         embedder=HashEmbedder(), background=False)


def test_rest_uses_the_check_it_is_given(tmp_path: Path) -> None:
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from tinycontext.app.service_source import OneService
    from tinycontext.rest import create_app

    app = create_app(OneService(_service(tmp_path)), warm=False, access=TeapotCheck())  # type: ignore[arg-type]
    client = TestClient(app, base_url="http://127.0.0.1")
    assert client.post("/recall_memories", json={}).status_code == 418
    assert client.get("/health").status_code == 418  # the gate, not REST, decides what is open


def test_mcp_http_uses_the_check_it_is_given(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from starlette.testclient import TestClient

    from tinycontext.adapters.mcp.transports import http_app
    from tinycontext.app.service_source import OneService

    app = http_app(OneService(_service(tmp_path)), "127.0.0.1", access=TeapotCheck())
    client = TestClient(app, base_url="http://127.0.0.1")
    assert client.post("/mcp", content=json.dumps({})).status_code == 418
