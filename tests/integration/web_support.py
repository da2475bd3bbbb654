"""Helpers for the memory browser's HTTP tests: a UI app over the public fakes."""

from __future__ import annotations

import re
from typing import Any

from starlette.testclient import TestClient

from tinycontext import TinyContextConfig, build_service
from tinycontext.testing import FixedClock, HashEmbedder, InMemoryStore, WordTokenizer

TOKEN = "test-token-0123456789abcdef"
BASE = "http://127.0.0.1"


def fake_service(tmp_path: Any, **config: Any) -> Any:
    cfg = TinyContextConfig(memory_db_path=str(tmp_path / "memories.db"), **config)
    return build_service(cfg, store=InMemoryStore(), embedder=HashEmbedder(),
                         tokenizer=WordTokenizer(), clock=FixedClock(), background=False)


def signed_in(app: Any) -> TestClient:
    """A client that opened the printed link once (so it holds the cookies)."""
    client = TestClient(app, base_url=BASE, follow_redirects=False)
    first = client.get(f"/?token={TOKEN}")
    assert first.status_code == 303 and first.headers["location"] == "/"
    return client


def csrf_of(page_html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page_html)
    assert found, "the form carries no CSRF field"
    return found.group(1)


def post_form(client: TestClient, path: str, fields: dict[str, str],
              origin: str | None = BASE) -> Any:
    headers = {"content-type": "application/x-www-form-urlencoded"}
    if origin is not None:
        headers["origin"] = origin
    from urllib.parse import urlencode

    return client.post(path, content=urlencode(fields), headers=headers)
