"""The created_at and superseded_at of a mirror's slots, so that a time window or an "as of"
moment is one comparison over the slots instead of a read of the qualifying rows' seqs from
an index on every search (an "as of" over a store with many replaced versions finds a large
share of them live at any moment).

Within one slot layout (a view's generation) a slot keeps its seq, and a stored version's
times do not change while it is mirrored: created_at is written with the row, superseded_at
when it is replaced, which is when it leaves the live mirror for the one of replaced
versions. So the times are read once per layout, and afterwards only for slots added since.
Times are compared as text, as the SQL conditions compare them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tinycontext import native

from .mirror_view import View

# (seq, created_at, superseded_at) of the given seqs, or of every row when given None.
Reader = Callable[[Sequence[int] | None], list[tuple[int, str, str | None]]]
WHOLE_READ_FROM = 2000  # new slots past which one scan of every row beats reads by seq
UNKNOWN = "\uffff"  # created_at of a slot whose row is gone: after every moment


@dataclass(frozen=True)
class TimeFilter:
    """Which slots a search keeps by time: created in [since, until], and with `live_at`
    (replaced versions) not replaced until after that moment. `read` reads rows' times."""

    read: Reader
    since: str | None = None
    until: str | None = None
    live_at: str | None = None


class SlotTimes:
    """The times of one mirror's slots, kept across searches while its layout lasts."""

    def __init__(self) -> None:
        self._generation = -1
        self._n = 0  # slots whose times are known
        self._created: Any = None
        self._replaced: Any = None

    def mask(self, view: View, when: TimeFilter) -> Any:
        """Slots [0, view.n) that pass `when` (dead slots too: the scope's mask drops them)."""
        created, replaced = self._arrays(view, when.read)
        keep = created <= when.until if when.until is not None else created != UNKNOWN
        if when.since is not None:
            keep &= created >= when.since
        if when.live_at is not None:
            keep &= (created <= when.live_at) & (replaced > when.live_at)
        return keep

    def _arrays(self, view: View, read: Reader) -> tuple[Any, Any]:
        np = native.numpy()

        if view.generation != self._generation or self._created is None:
            self._generation, self._n = view.generation, 0
            self._created = np.full(len(view.seqs), UNKNOWN)
            self._replaced = np.full(len(view.seqs), "")
        if view.n > self._n:
            self._extend(view, read)
        return self._created[: view.n], self._replaced[: view.n]

    def _extend(self, view: View, read: Reader) -> None:
        np = native.numpy()

        start, end = self._n, view.n
        seqs = view.seqs[start:end]
        rows = read(None if end - start > WHOLE_READ_FROM else seqs.tolist())
        created = np.full(end - start, UNKNOWN)
        replaced = np.full(end - start, "")
        if rows:
            found = np.array([r[0] for r in rows], dtype=np.int64)
            order = np.argsort(found, kind="stable")
            found = found[order]
            at = np.minimum(np.searchsorted(found, seqs), len(found) - 1)
            hit = found[at] == seqs
            rows_created = np.array([r[1] for r in rows])[order]
            rows_replaced = np.array([r[2] or "" for r in rows])[order]
            created = created.astype(np.promote_types(created.dtype, rows_created.dtype))
            replaced = replaced.astype(np.promote_types(replaced.dtype, rows_replaced.dtype))
            created[hit] = rows_created[at[hit]]
            replaced[hit] = rows_replaced[at[hit]]
        self._created = _placed(self._created, created, start, len(view.seqs))
        self._replaced = _placed(self._replaced, replaced, start, len(view.seqs))
        self._n = end


def _placed(kept: Any, new: Any, start: int, capacity: int) -> Any:
    """`kept` with `new` written from `start`, wide enough for both (text width and slots)."""
    np = native.numpy()

    dtype = np.promote_types(kept.dtype, new.dtype)
    size = max(len(kept), capacity, start + len(new))
    if dtype != kept.dtype or size > len(kept):
        grown = np.zeros(max(size, 2 * len(kept)), dtype=dtype)  # past [0, n) never read
        grown[:start] = kept[:start]
        kept = grown
    kept[start:start + len(new)] = new
    return kept
