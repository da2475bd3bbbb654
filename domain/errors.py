"""Errors with stable codes (SPEC section 2). The domain names what went wrong, never how a
transport reports it: REST maps a code to its HTTP status (adapters/rest/errors.py), MCP to
its text and JSON-RPC kind (adapters/mcp/errors.py)."""

from __future__ import annotations


class TinyContextError(Exception):
    """Root of every error the engine raises on purpose."""

    code = "internal_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class EmptyMemoryError(TinyContextError):
    code = "empty_memory"


class InvalidMemoryKindError(TinyContextError):
    code = "invalid_memory_kind"


class InvalidSortError(TinyContextError):
    code = "invalid_sort"


class RecallBudgetError(TinyContextError):
    code = "recall_budget"


class InvalidRequestError(TinyContextError):
    code = "invalid_request"


class SessionNotFoundError(TinyContextError):
    code = "session_not_found"


class MemoryNotFoundError(TinyContextError):
    code = "memory_not_found"


class AmbiguousMemoryReferenceError(TinyContextError):
    code = "ambiguous_memory_reference"


class MemoryAlreadySupersededError(TinyContextError):
    code = "memory_already_superseded"


class MemoryTooLargeError(TinyContextError):
    """Content over `max_memory_tokens`: the message says to split it."""

    code = "memory_too_large"


class UnauthorizedError(TinyContextError):
    code = "unauthorized"


class StoreError(TinyContextError):
    """The store itself failed (not the request): the message names the file or server and
    what to do. Adapters raise the subclasses; nothing stored changed."""


class StoreUnavailableError(StoreError):
    code = "store_unavailable"


class StoreReadOnlyError(StoreError):
    code = "store_read_only"


class StoreFullError(StoreError):
    code = "store_full"


class StoreCorruptError(StoreError):
    code = "store_corrupt"


class StoreLockedError(StoreError):
    """The store is encrypted and no key, or not its key, was given (or a key was given for a
    store that is not encrypted): the message says which and what to do, never the key."""

    code = "store_locked"


class InternalError(TinyContextError):
    """Anything unexpected: a transport reports an exception that is not a TinyContextError
    as this, with a fixed message (the details stay in the server's log)."""

    code = "internal_error"


# Every code, in the order of SPEC's table: each transport's table covers exactly these.
ERROR_CODES: tuple[str, ...] = tuple(
    cls.code
    for cls in (
        EmptyMemoryError,
        InvalidMemoryKindError,
        InvalidSortError,
        RecallBudgetError,
        InvalidRequestError,
        SessionNotFoundError,
        MemoryNotFoundError,
        AmbiguousMemoryReferenceError,
        MemoryAlreadySupersededError,
        MemoryTooLargeError,
        UnauthorizedError,
        StoreUnavailableError,
        StoreReadOnlyError,
        StoreFullError,
        StoreCorruptError,
        StoreLockedError,
        InternalError,
    )
)
