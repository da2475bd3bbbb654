"""Supersede and delete rules: an update replaces, a delete of the replacement restores."""

from __future__ import annotations

from dataclasses import dataclass

from .errors import MemoryAlreadySupersededError
from .memory import Memory, ref_of


def check_updatable(memory: Memory) -> None:
    """Only the live version of a memory may be updated."""
    if not memory.live:
        newer = ref_of(memory.superseded_by or "")
        raise MemoryAlreadySupersededError(
            f"Memory {memory.ref} was already replaced by {newer}; update the newer version "
            "instead (get_memory shows it)."
        )


@dataclass(frozen=True, slots=True)
class DeletionPlan:
    """What deleting `target` does to its neighbours in a supersede chain.

    `predecessor_id` is the older version the target had replaced (if it still points at the
    target). It becomes live again when the target was live, or is re-linked to the target's
    own successor when the target had itself been replaced, so a chain never resurrects a
    stale value beside the current one.
    """

    target_id: str
    predecessor_id: str | None
    successor_id: str | None


def plan_deletion(target: Memory, predecessor: Memory | None) -> DeletionPlan:
    """Work out the chain repair for deleting `target`."""
    pred_id = None
    if predecessor is not None and predecessor.superseded_by == target.id:
        pred_id = predecessor.id
    return DeletionPlan(target.id, pred_id, target.superseded_by if pred_id else None)
