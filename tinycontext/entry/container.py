"""The composition root: the only module that knows dependency-injector.

Providers point at plain constructors. The embedding model and token vocabulary are shared by
every container in the process (hosted mode runs one store per user but one model), so they
come from process-wide caches rather than per-container singletons.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from dependency_injector import containers, providers

from tinycontext.app.service import MemoryService
from tinycontext.app.service_source import OneService, Services
from tinycontext.config.engine import TinyContextConfig
from tinycontext.ports.clock import Clock
from tinycontext.ports.embedder import Embedder
from tinycontext.ports.store import Store
from tinycontext.ports.tokenizer import Tokenizer
from tinycontext.telemetry.setup import instrumented_service

_shared_lock = threading.Lock()
_embedders: dict[tuple[str, str, int], Embedder] = {}


def shared_embedder(embedding_model: str, models_dir: str, batch_size: int) -> Embedder:
    """One embedder (one loaded model) per process and model choice."""
    key = (embedding_model, models_dir, batch_size)
    with _shared_lock:
        embedder = _embedders.get(key)
        if embedder is None:
            from tinycontext.adapters.embedding.models import create_embedder

            embedder = create_embedder(embedding_model, Path(models_dir), batch_size)
            _embedders[key] = embedder
        return embedder


def _sqlite_store(path: str) -> Store:
    from tinycontext.adapters.sqlite.store import SqliteStore

    return SqliteStore(path)


def _store(path: str, url: str) -> Store:
    """SQLite at `path` by default; PostgreSQL when `store_url` is set (nothing connects yet)."""
    if not url:
        return _sqlite_store(path)
    from tinycontext.adapters.postgres.store import PostgresStore

    return PostgresStore(url)


def _tokenizer(encoding: str) -> Tokenizer:
    from tinycontext.adapters.embedding.tiktoken_tokenizer import TiktokenTokenizer

    return TiktokenTokenizer(encoding)


def _clock() -> Clock:
    from tinycontext.adapters.system.clock import SystemClock

    return SystemClock()


class Container(containers.DeclarativeContainer):
    config = providers.Dependency(instance_of=TinyContextConfig)
    store = providers.Singleton(
        _store, path=config.provided.memory_db_path, url=config.provided.store_url
    )
    embedder = providers.Singleton(
        shared_embedder,
        embedding_model=config.provided.embedding_model,
        models_dir=config.provided.models_dir,
        batch_size=config.provided.embedding_batch_size,
    )
    tokenizer = providers.Singleton(_tokenizer, encoding=config.provided.token_encoding)
    clock = providers.Singleton(_clock)
    # A plain MemoryService, or a traced one when an OpenTelemetry provider is installed.
    service = providers.Singleton(
        instrumented_service,
        store=store, embedder=embedder, tokenizer=tokenizer, clock=clock, config=config,
    )
    # Hosted mode: one service per user, each over its own store (and, for SQLite, its own
    # config), sharing this container's model, vocabulary and clock.
    tenant_service = providers.Factory(
        instrumented_service, embedder=embedder, tokenizer=tokenizer, clock=clock,
    )


def create_container(config: TinyContextConfig | None = None) -> Container:
    """A fresh container (overridden singletons stay cached, so never reuse one in tests)."""
    return Container(config=config or TinyContextConfig())


def container_services(container: Container) -> Services:
    """What the inbound adapters are handed for a single-user container: its one service."""
    return OneService(container.service)


def build_service(
    config: TinyContextConfig | None = None,
    *,
    store: Store | None = None,
    embedder: Embedder | None = None,
    tokenizer: Tokenizer | None = None,
    clock: Clock | None = None,
    background: bool = True,
) -> MemoryService:
    """A MemoryService from the config, with any port replaced by the caller's own object."""
    container = create_container(config)
    overrides: dict[str, Any] = {
        "store": store, "embedder": embedder, "tokenizer": tokenizer, "clock": clock,
    }
    for name, value in overrides.items():
        if value is not None:
            getattr(container, name).override(providers.Object(value))
    if not background:
        container.service.add_kwargs(background=False)
    return container.service()
