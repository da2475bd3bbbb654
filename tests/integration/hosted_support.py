"""Hosted-mode test harness: a real uvicorn server on loopback with per-user SQLite files.

The trusted proxy is 127.0.0.1 (TRUSTED_PROXY_CIDRS=127.0.0.1/32); an untrusted peer is a
client socket bound to 127.0.0.2. Only loopback addresses are ever used. Fake embedder and
tokenizer keep it fast: what is under test is routing, refusal and the files on disk.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.e2e.servers import free_port
from tests.fakes import FixedClock, HashEmbedder, WordTokenizer
from tinycontext.config.engine import TinyContextConfig

# Generated values (secrets.token_urlsafe): hosted mode refuses patterned ones like "ssss...".
SECRET = "tenant-secret-6FTeYeoTYD4ex4Jp9UQGPCKHJHQoqClb3fH2jxrE"
TOKEN = "proxy-token-rVwy0ItPLBg1JiNgsS6GBsYt8uT6N_QWe6ESeRbm"
OPERATOR = "operator-token-KeiuYXMMS6UPlogAUeXt5ath7d"
TRUSTED, UNTRUSTED = "127.0.0.1", "127.0.0.2"
USER_HEADER = "X-TinyContext-User-Id"


def hosted_env(store_dir: Path | None, **extra: str) -> dict[str, str]:
    """Valid hosted-mode variables; no store folder (None) for hosted mode on PostgreSQL."""
    env = {
        "TINYCONTEXT_TENANCY": "proxy-header",
        "TINYCONTEXT_TENANT_SECRET": SECRET,
        "TINYCONTEXT_TRUSTED_PROXY_CIDRS": "127.0.0.1/32",
        "TINYCONTEXT_TRUSTED_PROXY_TOKEN": TOKEN,
    }
    if store_dir is not None:
        env["TINYCONTEXT_TENANT_STORE_DIR"] = str(store_dir)
    env.update(extra)
    return env


def proxy_headers(user: str | None, token: str | None = TOKEN, **extra: str) -> dict[str, str]:
    """What the authenticating proxy adds: the token and the proven user id."""
    headers = dict(extra)
    if token is not None:
        headers["X-TinyContext-Proxy-Token"] = token
    if user is not None:
        headers[USER_HEADER] = user
    return headers


@dataclass
class HostedServer:
    base: str
    stores: Any  # TenantStores (SQLite) or PgTenantStores
    store_dir: Path  # unused (never created) on PostgreSQL
    clock: FixedClock

    def client(self, peer: str = TRUSTED, **headers: str) -> httpx.Client:
        transport = httpx.HTTPTransport(local_address=peer)
        encoded = {name: value.encode("utf-8") for name, value in headers.items()}
        return httpx.Client(base_url=self.base, transport=transport, headers=encoded,
                            timeout=30)


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file under `folder` with its size and modification time (to prove 'untouched')."""
    found = {}
    for path in sorted(folder.rglob("*")):
        info = path.stat()
        found[str(path.relative_to(folder))] = (info.st_size, info.st_mtime_ns)
    return found


@contextmanager
def serve(app: Any, host: str = "127.0.0.1") -> Iterator[str]:
    """Run `app` under uvicorn in a thread, peer addresses as seen on the socket."""
    import uvicorn

    port = free_port()
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on",
                            proxy_headers=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="hosted-uvicorn", daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)


@contextmanager
def hosted_server(tmp_path: Path, *, kind: str = "rest", store_url: str = "",
                  embedder: Any = None, background: bool = False, key_file: Path | None = None,
                  ui: bool = False, **env: str) -> Iterator[HostedServer]:
    """A hosted server ("rest": REST + /mcp, "mcp": Streamable HTTP only) over fresh files,
    or over the PostgreSQL database of `store_url` (then without any store folder).
    `key_file`: the server's encryption key (each user's file encrypted with their own key);
    `ui`: the memory browser at /ui too, behind the same gate (`--ui`)."""
    from tinycontext.adapters.mcp.transports import http_app
    from tinycontext.entry.container import process_parts
    from tinycontext.entry.web_ui import mount_ui, ui_app
    from tinycontext.hosted.serving import open_serving
    from tinycontext.hosted.settings import load_server_settings
    from tinycontext.rest import create_app

    store_dir = tmp_path / "tenants"
    if not store_url:
        store_dir.mkdir(mode=0o755, exist_ok=True)
        os.chmod(store_dir, 0o755)  # open_serving must tighten it
    settings = load_server_settings(hosted_env(None if store_url else store_dir, **env),
                                    transport="http", store_url=store_url)
    config = TinyContextConfig(memory_db_path=str(tmp_path / "single" / "memories.db"),
                               models_dir=str(tmp_path / "models"), store_url=store_url,
                               encryption_key_file=str(key_file) if key_file else "")
    clock = FixedClock()
    parts = process_parts(config, embedder=embedder or HashEmbedder(),
                          tokenizer=WordTokenizer(), clock=clock, background=background)
    serving = open_serving(config, settings, parts)
    if kind == "rest":
        app = create_app(serving.services, mcp=True, hosts=serving.hosts("127.0.0.1"),
                         access=serving.access, management=serving.management, warm=False)
    else:
        app = http_app(serving.services, "127.0.0.1", hosts=serving.hosts("127.0.0.1"),
                       access=serving.access, management=serving.management)
    if ui:
        app = mount_ui(app, ui_app(serving.services, hosts=serving.hosts("127.0.0.1"),
                                   access=serving.access))
    try:
        with serve(app) as base:
            yield HostedServer(base, serving.services, store_dir, clock)
    finally:
        serving.close()
