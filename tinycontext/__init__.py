"""TinyContext: token-light, local-first memory for AI agents.

The public API is imported lazily so that `import tinycontext` stays fast: nothing heavy
(pydantic, onnxruntime, SQLite extensions) loads until a name is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tinycontext.version import __version__ as __version__  # re-exported

_EXPORTS = {
    "MemoryInput": "tinycontext.domain.memory",
    "TinyContextError": "tinycontext.domain.errors",
    "TinyContextConfig": "tinycontext.config.engine",
    "MemoryService": "tinycontext.app.service",
    "build_service": "tinycontext.entry.container",
    "save_memories": "tinycontext.entry.api",
    "recall_memories": "tinycontext.entry.api",
    "list_memories": "tinycontext.entry.api",
    "get_memory": "tinycontext.entry.api",
    "update_memory": "tinycontext.entry.api",
    "delete_memory": "tinycontext.entry.api",
    "import_memories": "tinycontext.entry.api",
}

__all__ = [
    "MemoryInput", "MemoryService", "TinyContextConfig", "TinyContextError", "build_service",
    "delete_memory", "get_memory", "import_memories", "list_memories", "recall_memories",
    "save_memories", "update_memory",
]

if TYPE_CHECKING:
    from tinycontext.app.service import MemoryService
    from tinycontext.config.engine import TinyContextConfig
    from tinycontext.domain.errors import TinyContextError
    from tinycontext.domain.memory import MemoryInput
    from tinycontext.entry.api import (
        delete_memory,
        get_memory,
        import_memories,
        list_memories,
        recall_memories,
        save_memories,
        update_memory,
    )
    from tinycontext.entry.container import build_service


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'tinycontext' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module_name), name)
