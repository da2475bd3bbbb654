"""Tokenizer port: the token count every budget and `content_tokens` uses."""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class Tokenizer(Protocol):
    @property
    def name(self) -> str:
        """The encoding's name, e.g. `o200k_base`."""
        ...

    def count(self, text: str) -> int:
        """Number of tokens in `text` (0 for an empty string)."""
        ...
