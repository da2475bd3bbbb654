"""Recall counts of an encrypted store, kept back briefly and written in batches.

In WAL mode a commit makes every other connection of the store drop its whole page cache
before its next read. A plain store refills it from the operating system's file cache; an
encrypted one decrypts and authenticates every page again. Counting each recall in a commit
of its own did that to the store's other connections on every recall, so an encrypted store
keeps the counts here and writes them with the next write transaction (a save), within
FLUSH_SECONDS otherwise, and when the store closes or the process exits. This store's reads
add the pending counts to what they return, so answers in this process never lag; other
processes see the counts once written. A failed write keeps them for the next attempt and
is reported by the next recall, as a direct write's failure was.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import threading
import weakref
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from tinycontext.domain.errors import StoreCorruptError, StoreError, StoreReadOnlyError
from tinycontext.domain.memory import Memory
from tinycontext.ports.store import Page, Scored

from .connection import ConnectionPool
from .errors import read_only_message, refused_write_message

log = logging.getLogger(__name__)
FLUSH_SECONDS = 2.0
Batch = dict[str, tuple[int, str]]  # memory id -> (recalls not yet written, the last one's time)

_live: weakref.WeakSet[RecallCounts] = weakref.WeakSet()
# Re-entrant: a store dropped unclosed is closed by its finaliser, which the garbage collector
# may run inside `_live.add` below, in this same thread.
_exit_hook = threading.RLock()
_exit_registered = False


def _flush_all_at_exit() -> None:
    for counts in list(_live):
        counts.close()


class RecallCounts:
    """Pending recall counts of one store; rides on its write transactions (the pool calls
    take / write_batch / put_back)."""

    def __init__(self, pool: ConnectionPool) -> None:
        self._pool = pool
        self._lock = threading.Lock()
        self._pending: Batch = {}
        self._timer: threading.Timer | None = None
        self._failed = False  # the last write failed: the next recall retries it at once
        pool.rider = self

    # -- the pool's side: inside a write transaction -------------------------------------
    def take(self) -> Batch:
        with self._lock:
            batch, self._pending = self._pending, {}
            return batch

    def put_back(self, batch: Batch) -> None:
        """A rolled-back batch: merged under anything recalled since (whose time is later)."""
        with self._lock:
            for memory_id, (times, at) in batch.items():
                newer = self._pending.get(memory_id)
                self._pending[memory_id] = (
                    (times + newer[0], newer[1]) if newer else (times, at))

    @staticmethod
    def write_batch(conn: Any, batch: Batch) -> None:
        conn.executemany(
            "UPDATE memories SET recall_count = recall_count + ?, last_recalled_at = ? "
            "WHERE id = ?",
            [(times, at, memory_id) for memory_id, (times, at) in batch.items()],
        )

    # -- the store's side ----------------------------------------------------------------
    def add(self, memory_ids: Sequence[str], at: str) -> None:
        """Count a recall; refused as a direct write would be (read-only, damaged store), and
        a previous write that failed is retried now so the caller hears of a lasting fault."""
        if self._pool.read_only:
            raise StoreReadOnlyError(read_only_message(self._pool.path))
        if self._pool.damaged is not None:
            raise StoreCorruptError(refused_write_message(self._pool.path, self._pool.encrypted))
        with self._lock:
            for memory_id in memory_ids:
                times = self._pending.get(memory_id, (0, at))[0]
                self._pending[memory_id] = (times + 1, at)
            retry, self._failed = self._failed, False
        if retry:
            self.flush()
        else:
            self._schedule()

    def _schedule(self) -> None:
        global _exit_registered
        with self._lock:
            if self._timer is not None or not self._pending:
                return
            self._timer = threading.Timer(FLUSH_SECONDS, self._flush_later)
            self._timer.daemon = True
            self._timer.start()
        with _exit_hook:
            _live.add(self)
            if not _exit_registered:
                atexit.register(_flush_all_at_exit)
                _exit_registered = True

    def _flush_later(self) -> None:
        with self._lock:
            self._timer = None
        try:
            self.flush()
        except StoreError as exc:
            self._failed = True
            log.warning("recall counts of %s could not be written (%s); the next recall "
                        "tries again", self._pool.path, exc.code)

    def flush(self) -> None:
        """Write the pending counts now (an empty write transaction carries them)."""
        with self._lock:
            if not self._pending:
                return
        with self._pool.write():
            pass

    def close(self) -> None:
        with self._lock:
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
        try:
            self.flush()
        except Exception as exc:  # closing must go on; what was lost is logged, not raised
            log.warning("recall counts of %s were not written on close (%s)", self._pool.path,
                        getattr(exc, "code", type(exc).__name__))
        with _exit_hook, contextlib.suppress(KeyError):
            _live.remove(self)

    # -- reads: what this process has counted and not yet written -----------------------
    def pending(self) -> bool:
        with self._lock:
            return bool(self._pending)

    def memory(self, memory: Memory) -> Memory:
        with self._lock:
            extra = self._pending.get(memory.id)
        if extra is None:
            return memory
        return replace(memory, recall_count=memory.recall_count + extra[0],
                       last_recalled_at=extra[1])

    def scored(self, hits: list[Scored]) -> list[Scored]:
        if not self.pending():
            return hits
        return [replace(h, memory=self.memory(h.memory)) for h in hits]

    def page(self, page: Page) -> Page:
        return replace(page, memories=self.scored(page.memories)) if self.pending() else page
