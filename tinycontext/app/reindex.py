"""Background upkeep: re-embedding when the model (or document prefix) changes or rows lack
vectors, then the store's index maintenance (e.g. re-clustering the vector index as it grows).

Progress lives in the database itself (each row records the model that embedded it), so a
restarted process simply picks up the rows still pending. Saves and recalls never wait on it:
meanwhile the dense side ranks what is already re-embedded and BM25 covers the rest.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext

from tinycontext.domain.context import DENSE_CONTEXT_WEIGHT
from tinycontext.domain.errors import StoreError
from tinycontext.domain.memory import Memory
from tinycontext.ports.clock import Clock
from tinycontext.ports.embedder import Vector
from tinycontext.ports.store import Store

from .unexpected import log_unexpected
from .vectors import mix_context

log = logging.getLogger("tinycontext.reindex")
MAINTENANCE_INTERVAL = 5.0


class Reindexer:
    def __init__(
        self,
        store: Store,
        clock: Clock,
        model_key: str,
        embed_documents: Callable[[Sequence[str]], list[tuple[Vector, bytes | None]]],
        batch_size: int,
        background: bool = True,
        stage: Callable[[], AbstractContextManager[None]] = nullcontext,
        with_context: bool = False,
        context_weight: float = DENSE_CONTEXT_WEIGHT,
    ) -> None:
        self._with_context, self._context_weight = with_context, context_weight
        self._stage = stage
        self._store, self._clock = store, clock
        self._key, self._embed_documents = model_key, embed_documents
        self._batch = max(1, batch_size)
        self._background = background
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._checked = False
        self._last_kick = 0.0
        self.total = 0
        self.done = 0
        self._rate_base: tuple[float, int] | None = None  # (time, done) after the first batch
        self.running = False

    def ensure_started(self) -> None:
        """On first use, look for pending rows and start the worker thread if there are any."""
        if self._checked:
            return
        with self._lock:
            if self._checked:
                return
            self._checked = True
            pending = self._store.count_pending_embeddings(self._key)
            if pending:
                self.total, self.done, self.running = pending, 0, True
            self._start_worker()

    def after_write(self) -> None:
        """Give index upkeep a chance after writes (at most every MAINTENANCE_INTERVAL s)."""
        now = time.monotonic()
        if now - self._last_kick >= MAINTENANCE_INTERVAL:
            with self._lock:
                self._start_worker()

    def _start_worker(self) -> None:
        self._last_kick = time.monotonic()
        if not self._background or (self._thread is not None and self._thread.is_alive()):
            return
        self._thread = threading.Thread(
            target=self._run_safely, name="tinycontext-upkeep", daemon=True
        )
        self._thread.start()

    def step(self) -> int:
        """Re-embed one batch; returns how many rows it handled (0 when nothing is pending)."""
        with self._stage():
            batch = self._store.pending_embeddings(self._key, self._batch)
            if not batch:
                self.running = False
                return 0
            made = self._embed_documents([m.content for m in batch])
            vectors = [v for v, _ in made]
            if self._with_context:
                vectors = self._with_contexts(batch, vectors)
            tokens = {m.id: bits for m, (_, bits) in zip(batch, made, strict=True) if bits}
            self._store.set_embeddings(
                [(m.id, v) for m, v in zip(batch, vectors, strict=True)], self._key, tokens
            )
        self.done += len(batch)
        self.total = max(self.total, self.done)
        if self._rate_base is None:
            # The first batch also loads (or prepares) the model: timing from its end keeps
            # the ETA honest (timed from the start, a one-off load inflates every estimate).
            self._rate_base = (time.monotonic(), self.done)
        return len(batch)

    def _with_contexts(self, batch: list[Memory], vectors: list[Vector]) -> list[Vector]:
        """Mix each memory's save-time context into its vector, as saving does. A context
        memory is usually the one before it in the same batch: its own vector is reused."""
        contexts = self._store.contexts([m.id for m in batch])
        own = {m.id: v for m, v in zip(batch, vectors, strict=True)}
        missing = sorted({cid: text for cid, text in contexts.values() if cid not in own}.items())
        made = self._embed_documents([text for _, text in missing])
        own.update((cid, vector) for (cid, _), (vector, _) in zip(missing, made, strict=True))
        return [
            mix_context(v, own[contexts[m.id][0]], self._context_weight)
            if m.id in contexts else v
            for m, v in zip(batch, vectors, strict=True)
        ]

    def kick(self) -> None:
        """Start the worker now (a write left rows without a vector)."""
        with self._lock:
            self._start_worker()

    def run_until_done(self) -> int:
        """Re-embed everything pending in the calling thread (tests, `doctor --reindex`)."""
        self.ensure_started()
        handled = 0
        while not self._stop.is_set():
            count = self.step()
            if count == 0:
                break
            handled += count
        return handled

    def maintain_until_done(self) -> int:
        """Run index upkeep (clustering, re-tagging) to the end; returns the steps taken."""
        steps = 0
        while not self._stop.is_set() and self._store.maintain_index(self._key):
            steps += 1
        return steps

    def _run_safely(self) -> None:
        try:
            self.run_until_done()
            self.maintain_until_done()
        except StoreError as exc:  # e.g. a read-only store: said once, no traceback
            log.warning("re-embedding stopped: %s", exc.message)
            self.running = False
        except Exception as exc:  # noqa: BLE001 - logged without content; retried on next start
            log_unexpected(log, "re-embedding stopped; it resumes on the next start", exc)
            self.running = False

    def notice(self) -> str | None:
        """Progress and ETA while re-embedding runs, else None."""
        if not self.running:
            return None
        remaining = max(self.total - self.done, 0)
        eta = "estimating the time left"
        if self._rate_base is not None and self.done > self._rate_base[1]:
            since, done_then = self._rate_base
            rate = (self.done - done_then) / max(time.monotonic() - since, 1e-6)
            eta = f"about {int(remaining / rate) + 1} s left"
        return (
            f"Re-embedding stored memories for the current embedding model: {self.done} of "
            f"{self.total} done, {eta}. Recall keeps working meanwhile; memories not yet "
            "re-embedded are found by keyword only."
        )

    def stop(self) -> None:
        self._stop.set()
        thread = self._thread
        if thread is not None and thread.is_alive():
            thread.join(timeout=10)
