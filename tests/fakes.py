"""The project's own tests use the public test doubles (tinycontext.testing)."""

from tinycontext.testing import FixedClock, HashEmbedder, InMemoryStore, WordTokenizer

__all__ = ["FixedClock", "HashEmbedder", "InMemoryStore", "WordTokenizer"]
