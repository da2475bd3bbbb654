"""Stores filled in bulk, for benchmarks and large tests.

A save embeds every text, which is what a store of a million memories cannot wait for. Here
the caller prepares the stored memories itself (its own vectors, dates, tags and chains of
older versions), and they are written through the store port's one `add` call per batch, as
a save would hand them over; then the store's index upkeep is run to completion, as the
background upkeep would:

    from tinycontext.testing.bulk import bulk_id, bulk_load, prepared

    service = build_service(config, background=False)
    rows = [prepared(bulk_id(n), text, created_at=..., vector=..., model_key=service.model_key,
                     content_tokens=service.tokenizer.count(text)) for n, text in ...]
    loaded = bulk_load(service.store, [rows], service.model_key)

The vectors must come from the service's embedder (or imitate them: unit length, its
dimensions) for searches over them to mean anything; nothing is embedded here.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from tinycontext.domain.errors import InvalidRequestError
from tinycontext.domain.memory import KINDS, Memory
from tinycontext.ports.store import NewMemory

_LOW_BITS = (1 << 48) - 1


class BulkTarget(Protocol):
    """What a bulk load uses of a store (every Store is one)."""

    def add(self, items: Sequence[NewMemory]) -> None: ...

    def maintain_index(self, model_key: str) -> bool: ...


@dataclass(frozen=True, slots=True)
class Loaded:
    """What a bulk load wrote and how long each half took (seconds)."""

    rows: int
    load_s: float
    upkeep_s: float
    upkeep_steps: int


def bulk_id(number: int) -> str:
    """A memory id (uuid4-shaped, as saves make them) for row `number` >= 0; `bulk_number`
    reads the number back. The number is in the id's first 12 hex digits as well, so every
    memory has a ref of its own (what `get_memory` and the pages take)."""
    if not 0 <= number < _LOW_BITS:
        raise InvalidRequestError(f"bulk_id takes a number from 0 to {_LOW_BITS - 1}")
    return str(uuid.UUID(int=(number + 1) << 80 | (number + 1), version=4))


def bulk_number(memory_id: str) -> int:
    """The row number a `bulk_id` was made from (its low 48 bits)."""
    return (uuid.UUID(memory_id).int & _LOW_BITS) - 1


def prepared(
    memory_id: str, content: str, *, created_at: str, vector: bytes, model_key: str,
    content_tokens: int, token_bits: bytes | None = None, kind: str = "episodic",
    session_id: str | None = None, tags: Sequence[str] = (),
    metadata: Mapping[str, str | int | float | bool] | None = None,
    supersedes: str | None = None, superseded_by: str | None = None,
    superseded_at: str | None = None,
) -> NewMemory:
    """One memory as a save would hand it to the store. `vector`: float32 little-endian
    bytes; `token_bits`: the late-interaction sign bits a save stores (None: none); an older
    version names the one that replaced it (`superseded_by`, `superseded_at`), the newer one
    the version it replaced (`supersedes`). Tags and metadata are stored as given: a bulk
    load does not normalise them as a save does."""
    if kind not in KINDS:
        raise InvalidRequestError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    if not vector or len(vector) % 4:
        raise InvalidRequestError("vector must be float32 bytes (a multiple of 4, not empty)")
    if (superseded_by is None) != (superseded_at is None):
        raise InvalidRequestError("an older version needs both superseded_by and superseded_at")
    memory = Memory(
        memory_id, content, kind, session_id, created_at, content_tokens,
        embedding_model=model_key, superseded_by=superseded_by, superseded_at=superseded_at,
        supersedes=supersedes, tags=tuple(tags),
        metadata=tuple(sorted((metadata or {}).items())),
    )
    return NewMemory(memory, vector, tokens=token_bits)


def bulk_load(
    store: BulkTarget, batches: Iterable[Sequence[NewMemory]], model_key: str,
    progress: Callable[[str], None] | None = None, upkeep: bool = True,
) -> Loaded:
    """Each batch written with one `store.add` (a batch is one transaction: a few thousand
    memories keep it fast), older versions before the versions that replace them; then
    (unless `upkeep` is False) the index upkeep for `model_key` run until the store says it
    is done. `progress` gets a line after each batch and each upkeep step."""
    tell = progress or (lambda _line: None)
    started = time.perf_counter()
    rows = 0
    for batch in batches:
        store.add(batch)
        rows += len(batch)
        tell(f"stored {rows:,} ({rows / max(time.perf_counter() - started, 1e-9):,.0f}/s)")
    load_s = time.perf_counter() - started
    started = time.perf_counter()
    steps = 0
    while upkeep and store.maintain_index(model_key):
        steps += 1
        tell(f"index upkeep: {steps} steps")
    return Loaded(rows, load_s, time.perf_counter() - started, steps)
