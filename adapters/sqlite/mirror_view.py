"""The arrays a vector mirror searches (one published view of them) and their helpers."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from typing import Any

from tinycontext import native
from tinycontext.ports.store import Scope

DEAD = 255
NO_SESSION = -1
_GENERATIONS = itertools.count(1)  # numbers a view's slot layout (a reload starts another)


class MirrorUnusable(Exception):
    """The rows cannot be mirrored (no codes yet, or mixed dimensions): search in SQL."""


@dataclass(frozen=True)
class View:
    """What a search reads: slots [0, n) of arrays that later writes only extend or patch,
    with the numbering of kinds and sessions those slots use. A reload builds a new view and
    publishes it in one assignment, so a search never sees a half-built one."""

    n: int
    seqs: Any  # int64 (capacity,)
    kinds: Any  # uint8 (capacity,), DEAD for removed slots
    sessions: Any  # int32 (capacity,), NO_SESSION for none
    bits: Any  # uint64 (words, capacity): one row per word, so Hamming runs column-wise
    codes: Any  # int8 (capacity, dims)
    kind_codes: dict[str, int]
    session_codes: dict[str, int]
    cells: Any = None  # int64 (capacity,): each slot's IVF tag in `vector_index.cell_key`
    generation: int = 0  # the same for views that only extend or patch one layout


def grow(view: View) -> View:
    """Twice the capacity; the old arrays stay as they are for searches still reading them."""
    n = view.n
    grown = replace(
        empty(len(view.bits), view.codes.shape[1], 2 * len(view.seqs)), n=n,
        kind_codes=view.kind_codes, session_codes=view.session_codes,
        generation=view.generation,
    )
    grown.seqs[:n], grown.kinds[:n], grown.sessions[:n], grown.cells[:n] = (
        view.seqs[:n], view.kinds[:n], view.sessions[:n], view.cells[:n])
    grown.bits[:, :n], grown.codes[:n] = view.bits[:, :n], view.codes[:n]
    return grown


def mirror_bytes(rows: int, dims: int) -> int:
    """Bytes a mirror of `rows` vectors holds: int8 codes, sign bits and a 16-byte seq/tag
    per vector (the one size both the mirror limit and the cells' threshold compare)."""
    return rows * (dims + dims // 8 + 16)


def empty(words: int, dims: int, capacity: int) -> View:
    np = native.numpy()

    return View(
        0, np.zeros(capacity, np.int64), np.full(capacity, DEAD, np.uint8),
        np.full(capacity, NO_SESSION, np.int32), np.zeros((words, capacity), np.uint64),
        np.zeros((capacity, dims), np.int8), {}, {}, np.zeros(capacity, np.int64),
        next(_GENERATIONS),
    )


def code(codes: dict[str, int], value: str | None) -> int:
    """A small integer for a kind or session id (NO_SESSION for none), numbered on first use."""
    if value is None:
        return NO_SESSION
    known = codes.get(value)
    if known is None:
        known = codes[value] = len(codes)
    return known


def scope_mask(view: View, scope: Scope) -> Any:
    """The live slots in scope, or None when no slot can be (unknown kind or session)."""
    kind = view.kind_codes.get(scope.kind)
    if kind is None:
        return None
    n = view.n
    mask = view.kinds[:n] == kind
    if scope.session_id is not None:
        session = view.session_codes.get(scope.session_id)
        if session is None:
            return None
        mask &= view.sessions[:n] == session
    elif scope.exact:
        mask &= view.sessions[:n] == NO_SESSION
    return mask
