"""Masks of labels (tags, metadata pairs) over a mirror's slots, so a filter's labels thin
out the mirror's own scan. A label's rows come from its index as seqs; looking each one up
in a seq -> slot dict is slow for a broad label, so a sorted copy of the live slots' seqs,
made again only when the mirror changed, answers them all with one searchsorted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tinycontext import native

from .mirror_view import DEAD, View

MAX_MASKS = 64  # labels whose masks a mirror keeps


class SlotIndex:
    """Seqs to slots for one state of a mirror, and masks of labels in that state."""

    def __init__(self) -> None:
        self._key: tuple[int, int, int] | None = None
        self._seqs: Any = None  # sorted seqs of live slots
        self._slots: Any = None  # their slots, in that order
        self._masks: dict[str, Any] = {}

    def _refresh(self, view: View, head: int) -> None:
        np = native.numpy()

        key = (view.generation, view.n, head)
        if key == self._key:
            return
        n = view.n
        live = np.flatnonzero(view.kinds[:n] != DEAD)
        order = np.argsort(view.seqs[live], kind="stable")
        self._seqs, self._slots = view.seqs[live][order], live[order]
        self._masks = {}
        self._key = key

    def slots(self, view: View, head: int, seqs: Sequence[int]) -> Any:
        """The slots holding these seqs (seqs not held are left out)."""
        np = native.numpy()

        self._refresh(view, head)
        if not len(seqs) or not len(self._seqs):
            return np.zeros(0, np.int64)
        wanted = np.asarray(seqs, dtype=np.int64)
        at = np.minimum(np.searchsorted(self._seqs, wanted), len(self._seqs) - 1)
        return self._slots[at[self._seqs[at] == wanted]]

    def mask(self, view: View, head: int, label: str, rows: Callable[[], Sequence[int]]) -> Any:
        """Slots holding the rows of `label` (`rows` reads them), kept until the mirror
        changes: every change of a label's rows is a change of vectors too (a save, an
        update, a delete, a re-embedding), so the log head tells when it is stale."""
        np = native.numpy()

        self._refresh(view, head)
        found = self._masks.get(label)
        if found is None:
            found = np.zeros(view.n, dtype=bool)
            found[self.slots(view, head, rows())] = True
            if len(self._masks) >= MAX_MASKS:
                self._masks.clear()
            self._masks[label] = found
        return found
