"""The Python API of SPEC section 2: module-level functions over one service per config.

These are the operations' dict forms (each the typed result's `to_dict()`); the service
itself has only the typed operations.

The process has one container (built on first use), and each config its service from it: every
service shares the container's loaded model and vocabulary. Configs are built in code: the
Python API never reads the environment (server processes do, in tinycontext.entry.bootstrap).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tinycontext.app.service import MemoryService
from tinycontext.config.engine import TinyContextConfig
from tinycontext.domain.errors import InvalidRequestError
from tinycontext.domain.memory import MemoryInput
from tinycontext.entry.container import Container, config_service, create_container

__all__ = [
    "save_memories", "recall_memories", "list_memories", "get_memory", "update_memory",
    "delete_memory", "import_memories", "service_for", "close_all"
]

_lock = threading.Lock()
_services: dict[TinyContextConfig, MemoryService] = {}
_container: Container | None = None  # the process's one container, built on first use


def service_for(config: TinyContextConfig | None = None) -> MemoryService:
    """The process's service for this config (built once; no config = the defaults)."""
    key = config or TinyContextConfig()
    with _lock:
        service = _services.get(key)
        if service is None:
            service = config_service(_process_container(), key)
            _services[key] = service
        return service


def _process_container() -> Container:
    global _container
    if _container is None:
        _container = create_container()
    return _container


def close_all() -> None:
    """Close every service the module-level functions opened (and with each its store); the
    loaded model stays for the next call."""
    with _lock:
        for service in _services.values():
            service.close()
        _services.clear()


def save_memories(
    memories: Sequence[MemoryInput | dict[str, Any]],
    session_id: str | None = None,
    *,
    config: TinyContextConfig | None = None,
) -> dict[str, Any]:
    return service_for(config).save(memories, session_id).to_dict()


def recall_memories(
    query: str | None = None,
    session_id: str | None = None,
    max_tokens: int | None = None,
    top_k: int | None = None,
    tags: Sequence[str] | None = None,
    metadata: Mapping[str, Any] | None = None,
    since: str | None = None,
    until: str | None = None,
    as_of: str | None = None,
    *,
    config: TinyContextConfig | None = None,
) -> dict[str, Any]:
    return service_for(config).recall(
        query, session_id, max_tokens, top_k, tags, metadata, since, until, as_of
    ).to_dict()


def list_memories(
    session_id: str | None = None,
    kind: str | None = None,
    since: str | None = None,
    until: str | None = None,
    limit: int | None = 20,
    offset: int | None = 0,
    sort: str | None = None,
    search: str | None = None,
    tags: Sequence[str] | None = None,
    metadata: Mapping[str, Any] | None = None,
    as_of: str | None = None,
    *,
    config: TinyContextConfig | None = None,
) -> dict[str, Any]:
    return service_for(config).list_page(
        session_id, kind, since, until, limit, offset, sort, search, tags, metadata, as_of
    ).to_dict()


def get_memory(
    memory_id: str, as_of: str | None = None, *, config: TinyContextConfig | None = None
) -> dict[str, Any]:
    return service_for(config).detail(memory_id, as_of).to_dict()


def update_memory(
    memory_id: str, content: str | None, tags: Sequence[str] | None = None,
    metadata: Mapping[str, Any] | None = None, *, config: TinyContextConfig | None = None,
) -> dict[str, Any]:
    return service_for(config).update(memory_id, content, tags, metadata).to_dict()


def delete_memory(memory_id: str, *, config: TinyContextConfig | None = None) -> dict[str, Any]:
    return service_for(config).delete(memory_id).to_dict()


def import_memories(
    path: str,
    from_format: str = "tinycontext",
    session_id: str | None = None,
    tags: Sequence[str] = (),
    include_assistant: bool = False,
    dry_run: bool = False,
    *,
    config: TinyContextConfig | None = None,
    service: MemoryService | None = None,
    batch_size: int = 64,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """`tinycontext import --from FORMAT PATH` as a function (docs/guides/importing.md).

    `service`: import into this one (from `build_service`, e.g. with your own ports) instead
    of the config's; `batch_size`: memories embedded and saved at a time; `progress(done,
    total)` is called as the import goes."""
    from tinycontext.importers.importing import import_file
    from tinycontext.importers.report import ImportOptions

    if service is not None and config is not None:
        raise InvalidRequestError("Pass config or service to import_memories, not both: "
                                  "a service already has its config.")
    options = ImportOptions(session_id=session_id, tags=tuple(tags),
                            include_assistant=include_assistant, dry_run=dry_run,
                            batch_size=batch_size)
    target = service if service is not None else service_for(config)
    return import_file(target, from_format, path, options, progress).to_dict()
