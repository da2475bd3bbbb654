"""Errors with stable codes; every adapter maps them through one table (SPEC section 2)."""

from __future__ import annotations


class TinyContextError(Exception):
    """Root of every error the engine raises on purpose."""

    code = "internal_error"
    status = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class EmptyMemoryError(TinyContextError):
    code, status = "empty_memory", 400


class InvalidMemoryKindError(TinyContextError):
    code, status = "invalid_memory_kind", 400


class InvalidSortError(TinyContextError):
    code, status = "invalid_sort", 400


class RecallBudgetError(TinyContextError):
    code, status = "recall_budget", 400


class InvalidRequestError(TinyContextError):
    code, status = "invalid_request", 400


class SessionNotFoundError(TinyContextError):
    code, status = "session_not_found", 404


class MemoryNotFoundError(TinyContextError):
    code, status = "memory_not_found", 404


class AmbiguousMemoryReferenceError(TinyContextError):
    code, status = "ambiguous_memory_reference", 409


class MemoryAlreadySupersededError(TinyContextError):
    code, status = "memory_already_superseded", 409


class MemoryTooLargeError(TinyContextError):
    """Content over `max_memory_tokens`: the message says to split it."""

    code, status = "memory_too_large", 413


class UnauthorizedError(TinyContextError):
    code, status = "unauthorized", 401


class StoreError(TinyContextError):
    """The store itself failed (not the request): the message names the file or server and
    what to do. Adapters raise the subclasses; nothing stored changed."""


class StoreUnavailableError(StoreError):
    code, status = "store_unavailable", 503


class StoreReadOnlyError(StoreError):
    code, status = "store_read_only", 503


class StoreFullError(StoreError):
    code, status = "store_full", 507


class StoreCorruptError(StoreError):
    code, status = "store_corrupt", 500


class InternalError(TinyContextError):
    code, status = "internal_error", 500


ERROR_STATUS: dict[str, int] = {
    cls.code: cls.status
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
        InternalError,
    )
}
