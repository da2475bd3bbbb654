"""The composition root: the only module that knows dependency-injector.

Providers point at plain constructors. The embedding model and token vocabulary are shared by
every container in the process (hosted mode runs one store per user but one model), so they
come from process-wide caches rather than per-container singletons.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path

from dependency_injector import containers, providers

from tinycontext.app.service import MemoryService
from tinycontext.app.service_source import OneService, Services
from tinycontext.config.engine import TinyContextConfig
from tinycontext.hosted.parts import ProcessParts
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


def sqlite_key(config: TinyContextConfig) -> bytes | None:
    """The single-user store's SQLCipher key when encryption is configured (then SQLCipher
    becomes this process's SQLite), else None; a bad key or a missing extra fails here."""
    from tinycontext.config.keys import store_key

    material = sqlite_key_material(config)
    return None if material is None else store_key(material)


def sqlite_key_material(config: TinyContextConfig) -> bytes | None:
    """The configured key material, with SQLCipher made this process's SQLite; None when
    encryption is not configured. Refused for PostgreSQL, whose encryption at rest is the
    database server's and its disk's (docs/postgres.md)."""
    from tinycontext.config.keys import EncryptionKeyError, key_material

    material = key_material(config)
    if material is None:
        return None
    if config.store_url:
        raise EncryptionKeyError(
            "An encryption key is configured but the store is PostgreSQL (store_url): "
            "encryption at rest there is the database server's and its disk's job (see "
            "docs/postgres.md). Unset TINYCONTEXT_ENCRYPTION_KEY_FILE / _KEY."
        )
    from tinycontext.adapters.sqlite.driver import EncryptionUnavailableError, use_sqlcipher

    try:
        use_sqlcipher()
    except EncryptionUnavailableError as exc:
        raise EncryptionKeyError(str(exc)) from None
    return material


def _store(config: TinyContextConfig) -> Store:
    """SQLite at `memory_db_path` by default (encrypted when a key is configured); PostgreSQL
    when `store_url` is set (nothing connects yet)."""
    if not config.store_url:
        from tinycontext.adapters.sqlite.store import SqliteStore

        return SqliteStore(config.memory_db_path, key=sqlite_key(config))
    sqlite_key_material(config)  # a key with PostgreSQL is refused, never silently unused
    from tinycontext.adapters.postgres.store import PostgresStore

    return PostgresStore(config.store_url)


def _tokenizer(encoding: str) -> Tokenizer:
    from tinycontext.adapters.embedding.tiktoken_tokenizer import TiktokenTokenizer

    return TiktokenTokenizer(encoding)


def _clock() -> Clock:
    from tinycontext.adapters.system.clock import SystemClock

    return SystemClock()


class Container(containers.DeclarativeContainer):
    config = providers.Dependency(instance_of=TinyContextConfig)
    store = providers.Singleton(_store, config=config)
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


class ContainerParts(ProcessParts):
    """A server process's parts from its one container (what hosted.serving asks for)."""

    def __init__(self, container: Container, background: bool, eager: bool) -> None:
        self._container = container
        self._background = background
        self._eager = eager

    def single(self) -> Services:
        if self._eager:  # ports given by the caller: the service is built now, as before
            service = self._container.service()
            return OneService(lambda: service)
        return container_services(self._container)

    def tenant_service(self, store: Store, config: TinyContextConfig) -> MemoryService:
        return self._container.tenant_service(store=store, config=config,
                                              background=self._background)

    def key_material(self, config: TinyContextConfig) -> bytes | None:
        return sqlite_key_material(config)

    def warm(self) -> None:
        self._container.tokenizer().count("warm up")
        self._container.embedder().embed(["warm up"])


def process_parts(
    config: TinyContextConfig,
    *,
    embedder: Embedder | None = None,
    tokenizer: Tokenizer | None = None,
    clock: Clock | None = None,
    background: bool = True,
) -> ContainerParts:
    """The one container of a server process, with any shared port replaced (tests)."""
    given = {"embedder": embedder, "tokenizer": tokenizer, "clock": clock}
    container = _configured(config, given, background)
    eager = any(value is not None for value in given.values()) or not background
    return ContainerParts(container, background, eager)


def _configured(config: TinyContextConfig | None, ports: Mapping[str, object | None],
                background: bool) -> Container:
    """A fresh container with the given ports (those not None) in place of its own."""
    container = create_container(config)
    for name, value in ports.items():
        if value is not None:
            getattr(container, name).override(providers.Object(value))
    if not background:
        container.service.add_kwargs(background=False)
    return container


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
    ports = {"store": store, "embedder": embedder, "tokenizer": tokenizer, "clock": clock}
    return _configured(config, ports, background).service()
