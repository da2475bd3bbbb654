"""PostgreSQL failures of the store as the coded store errors (SPEC section 2).

`SharedPgPool` runs every connect, schema step and transaction inside `translated`, so no raw
psycopg error about the server (down, refusing the login, read-only, out of disk, damaged)
reaches a caller. Messages show the URL without its password and never the server's own text,
which can quote row values.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from tinycontext.domain.errors import (
    StoreCorruptError,
    StoreError,
    StoreFullError,
    StoreReadOnlyError,
    StoreUnavailableError,
    TinyContextError,
)

log = logging.getLogger(__name__)

DOCTOR = "`tinycontext doctor` tests the connection"
# SQLSTATE classes and codes (PostgreSQL appendix A) that mean "the server cannot serve now".
_UNAVAILABLE_CLASSES = ("08", "28", "57")  # connection, authorization, operator intervention
_UNAVAILABLE_STATES = {
    "3D000": "the database does not exist",
    "53000": "the server is out of resources",
    "53200": "the server is out of memory",
    "53300": "the server has too many connections",
    "42501": "the database user lacks a privilege this operation needs",
}
# What a connection failure (no SQLSTATE: it happens before the server answers) was about.
_CONNECT_REASONS = (
    ("connection refused", "the connection was refused (is the server running?)"),
    ("password authentication failed", "authentication failed"),
    ("no pg_hba.conf entry", "authentication failed (no pg_hba.conf entry)"),
    ("not permitted to log in", "authentication failed (the role may not log in)"),
    ("role", "authentication failed (no such role)"),
    ("database", "the database does not exist"),
    ("timeout", "the connection timed out"),
    ("timed out", "the connection timed out"),
    ("could not translate host name", "the host name is unknown"),
)


def _connect_reason(exc: BaseException) -> str:
    text = str(exc).lower()
    return next(
        (reason for needle, reason in _CONNECT_REASONS if needle in text),
        "the server could not be reached",
    )


def store_error(exc: BaseException, where: str) -> StoreError | None:
    """The coded error for a server failure, or None when `exc` is not one (a bug, a
    constraint): those stay as they are and the transports report internal_error."""
    try:
        import psycopg
    except ImportError:  # the `postgres` extra is missing: said by the caller's own error
        return None
    if not isinstance(exc, psycopg.Error):
        return None
    state = getattr(exc, "sqlstate", None) or ""
    if state == "25006":  # read_only_sql_transaction: a standby or a read-only default
        return StoreReadOnlyError(
            f"The PostgreSQL store at {where} accepts only reads (a standby replica or a "
            "read-only transaction default), so nothing can be saved, updated or deleted; "
            "recall and list still work. Point store_url at the primary server to write."
        )
    if state == "53100":  # disk_full
        return StoreFullError(
            f"The PostgreSQL server of the store at {where} has no disk space left; nothing "
            "was written. Free space on the server and retry."
        )
    if state in ("XX001", "XX002"):  # data_corrupted, index_corrupted
        return StoreCorruptError(
            f"The PostgreSQL store at {where} reports damaged data or indexes: check the "
            "server's log, REINDEX or restore from a backup, or export what is still readable "
            "with `tinycontext export`."
        )
    reason = _UNAVAILABLE_STATES.get(state)
    if reason is None and (state[:2] in _UNAVAILABLE_CLASSES or (
        not state and isinstance(exc, psycopg.OperationalError)
    )):
        reason = _connect_reason(exc)
    if reason is None:
        return None
    return StoreUnavailableError(
        f"The PostgreSQL store at {where} cannot be used: {reason}. Check that the server is "
        f"up and that store_url's host, database, user and password are right ({DOCTOR})."
    )


@contextmanager
def translated(where: str) -> Iterator[None]:
    """Run a block, turning server failures into coded store errors (`where`: redacted URL)."""
    try:
        yield
    except TinyContextError:
        raise
    except Exception as exc:
        error = store_error(exc, where)
        if error is None:
            raise
        # Class and SQLSTATE only: the server's message may quote the values of a row.
        log.warning("PostgreSQL store %s: %s (%s, SQLSTATE %s)", where, error.code,
                    type(exc).__name__, getattr(exc, "sqlstate", None))
        raise error from exc
