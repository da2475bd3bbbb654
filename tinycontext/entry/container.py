"""The composition root: the only module that knows dependency-injector.

One container per process owns every long-lived part: the embedding model and the token
vocabulary (loaded once per model choice, however many stores use them), the clock, and a
single-user process's store and service as Resources it closes, service first. Hosted mode's
per-user services and the Python API's per-config services come from a Factory over the same
shared parts; each of those is closed with its own store. Providers point at plain constructors.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from dependency_injector import containers, providers

from tinycontext.adapters.mcp.frame import PROMPT_FRAMING
from tinycontext.app.service import MemoryService
from tinycontext.app.service_source import Services
from tinycontext.config.engine import TinyContextConfig
from tinycontext.entry.stores import open_store, sqlite_key_material
from tinycontext.hosted.parts import ProcessParts
from tinycontext.ports.clock import Clock
from tinycontext.ports.embedder import Embedder
from tinycontext.ports.store import Store
from tinycontext.ports.tokenizer import Tokenizer
from tinycontext.telemetry.setup import enabled as telemetry_enabled


class Models:
    """The embedders and token vocabularies one container loaded, one per model choice (a
    server has one config; the Python API may be handed several)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._embedders: dict[tuple[str, str, int], Embedder] = {}
        self._tokenizers: dict[str, Tokenizer] = {}

    def embedder(self, config: TinyContextConfig) -> Embedder:
        key = (config.embedding_model, config.models_dir, config.embedding_batch_size)
        with self._lock:
            embedder = self._embedders.get(key)
            if embedder is None:
                from tinycontext.adapters.embedding.models import create_embedder

                embedder = create_embedder(key[0], Path(key[1]), key[2])
                self._embedders[key] = embedder
            return embedder

    def tokenizer(self, config: TinyContextConfig) -> Tokenizer:
        encoding = config.token_encoding
        with self._lock:
            tokenizer = self._tokenizers.get(encoding)
            if tokenizer is None:
                from tinycontext.adapters.embedding.tiktoken_tokenizer import TiktokenTokenizer

                tokenizer = TiktokenTokenizer(encoding)
                self._tokenizers[encoding] = tokenizer
            return tokenizer


def _opened(config: TinyContextConfig) -> Iterator[Store]:
    """The configured store, closed when the container shuts its resources down."""
    yield from _closing(open_store(config))


def _closing(store: Store) -> Iterator[Store]:
    try:
        yield store
    finally:
        store.close()


def _service(store: Store, embedder: Embedder, tokenizer: Tokenizer, clock: Clock,
             config: TinyContextConfig, background: bool = True,
             release: Callable[[], None] | None = None) -> MemoryService:
    """A MemoryService, or a traced one (spans around it, its store and its model) when an
    OpenTelemetry provider is installed. Its recall budget counts MCP's frame by default."""
    if not telemetry_enabled():
        return MemoryService(store=store, embedder=embedder, tokenizer=tokenizer, clock=clock,
                             config=config, background=background, release=release,
                             recall_framing=PROMPT_FRAMING)
    from tinycontext.telemetry.traced_ports import TracedEmbedder, traced_store
    from tinycontext.telemetry.traced_service import TracedMemoryService

    return TracedMemoryService(store=traced_store(store), embedder=TracedEmbedder(embedder),
                               tokenizer=tokenizer, clock=clock, config=config,
                               background=background, release=release,
                               recall_framing=PROMPT_FRAMING)


def _running(store: Store, embedder: Embedder, tokenizer: Tokenizer, clock: Clock,
             config: TinyContextConfig, background: bool = True,
             release: Callable[[], None] | None = None) -> Iterator[MemoryService]:
    """The single-user service, its background re-embedding stopped before the store closes."""
    service = _service(store, embedder, tokenizer, clock, config, background, release)
    try:
        yield service
    finally:
        service.stop()


def _embedder(models: Models, config: TinyContextConfig) -> Embedder:
    return models.embedder(config)


def _tokenizer(models: Models, config: TinyContextConfig) -> Tokenizer:
    return models.tokenizer(config)


def _clock() -> Clock:
    from tinycontext.adapters.system.clock import SystemClock

    return SystemClock()


class Container(containers.DeclarativeContainer):
    config = providers.Dependency(instance_of=TinyContextConfig)
    models = providers.Singleton(Models)
    embedder = providers.Singleton(_embedder, models=models, config=config)
    tokenizer = providers.Singleton(_tokenizer, models=models, config=config)
    clock = providers.Singleton(_clock)
    store = providers.Resource(_opened, config=config)
    # A plain MemoryService, or a traced one when an OpenTelemetry provider is installed.
    service = providers.Resource(
        _running, store=store, embedder=embedder, tokenizer=tokenizer, clock=clock,
        config=config,
    )
    # Hosted mode's per-user and the Python API's per-config services: each over its own
    # store (given, with `release` closing it), sharing this container's model and clock.
    tenant_service = providers.Factory(_service, embedder=embedder, tokenizer=tokenizer,
                                       clock=clock)


def create_container(config: TinyContextConfig | None = None) -> Container:
    """A fresh container (overridden singletons stay cached, so never reuse one in tests)."""
    return Container(config=config or TinyContextConfig())


class ContainerServices(Services):
    """A single-user process's one service, from its container; closing it shuts the
    container's resources down (the service's re-embedding stops, then the store closes)."""

    def __init__(self, container: Container) -> None:
        self._container = container
        self._lock = threading.Lock()

    def current(self) -> MemoryService:
        with self._lock:  # requests may race to the first build: one service, one store
            return self._container.service()

    def warm(self) -> None:
        self.current()  # the store opens too: a large store's vector mirror starts loading
        self._container.tokenizer().count("warm up")
        self._container.embedder().embed(["warm up"])

    def close(self) -> None:
        with self._lock:
            self._container.shutdown_resources()


def container_services(container: Container) -> Services:
    """What the inbound adapters are handed for a single-user container: its one service."""
    return ContainerServices(container)


@dataclass(frozen=True)
class Ports:
    """Ports a caller gives in place of the container's own (None: the container's)."""

    store: Store | None = None
    embedder: Embedder | None = None
    tokenizer: Tokenizer | None = None
    clock: Clock | None = None


class ContainerParts(ProcessParts):
    """A server process's parts from its one container (what hosted.serving asks for)."""

    def __init__(self, container: Container, background: bool, eager: bool) -> None:
        self._container = container
        self._background = background
        self._eager = eager

    def single(self) -> Services:
        services = ContainerServices(self._container)
        if self._eager:  # ports given by the caller: the service is built now, as before
            services.current()
        return services

    def tenant_service(self, store: Store, config: TinyContextConfig) -> MemoryService:
        return self._container.tenant_service(store=store, config=config,
                                              background=self._background, release=store.close)

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
    container = _configured(config, Ports(None, embedder, tokenizer, clock), background)
    eager = any(port is not None for port in (embedder, tokenizer, clock)) or not background
    return ContainerParts(container, background, eager)


def _configured(config: TinyContextConfig | None, ports: Ports, background: bool) -> Container:
    """A fresh container with the given ports (those not None) in place of its own."""
    container = create_container(config)
    if ports.store is not None:  # the container closes it with the service, as its own
        container.store.override(providers.Resource(_closing, ports.store))
    for provider, value in ((container.embedder, ports.embedder),
                            (container.tokenizer, ports.tokenizer), (container.clock, ports.clock)):
        if value is not None:
            provider.override(providers.Object(value))
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
    """A MemoryService from a container of its own, with any port replaced by the caller's
    own object; closing the service shuts that container down (the store closes with it)."""
    container = _configured(config, Ports(store, embedder, tokenizer, clock), background)
    container.service.add_kwargs(release=container.shutdown_resources)
    return container.service()


def config_service(container: Container, config: TinyContextConfig) -> MemoryService:
    """A service over `config`'s own store, sharing the container's loaded models (the Python
    API's per-config services); closing the service closes that store."""
    models = container.models()
    store = open_store(config)
    return container.tenant_service(
        store=store, config=config, embedder=models.embedder(config),
        tokenizer=models.tokenizer(config), release=store.close,
    )
