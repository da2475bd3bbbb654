"""Test doubles for code built on TinyContext: fakes of the four ports that pass the same
contract suites as the real adapters (tests/contract/), deterministic and free of I/O.

    from tinycontext import TinyContextConfig, build_service
    from tinycontext.testing import FixedClock, HashEmbedder, InMemoryStore, WordTokenizer

    service = build_service(TinyContextConfig(), store=InMemoryStore(), embedder=HashEmbedder(),
                            tokenizer=WordTokenizer(), clock=FixedClock())

Only the domain and the ports are imported: no model, SQLite extension or server library.
"""

from tinycontext.testing.doubles import FixedClock, HashEmbedder, WordTokenizer
from tinycontext.testing.memory_store import InMemoryStore

__all__ = ["FixedClock", "HashEmbedder", "InMemoryStore", "WordTokenizer"]
