"""Management queries (SPEC section 8): what the Overview view shows of one store.

They read through the same store port as the six operations; adapters ask the service for
them instead of reaching its store.
"""

from __future__ import annotations

from dataclasses import dataclass

from tinycontext.domain.listing import ListQuery
from tinycontext.domain.memory import EPISODIC, PROFILE

from .browsing import list_page
from .core import Core
from .results import ListedItem, Result

EXAMPLES = 5


@dataclass(frozen=True, kw_only=True)
class KindCounts(Result):
    episodic: int
    profile: int


@dataclass(frozen=True, kw_only=True)
class Overview(Result):
    """Live memories by kind, the never-recalled episodic ones (a count and the oldest few),
    and the creation times of the oldest and newest live memory."""

    by_kind: KindCounts
    never_recalled: int
    never_recalled_examples: tuple[ListedItem, ...]
    oldest: str | None
    newest: str | None
    current_time: str

    @property
    def total(self) -> int:
        return self.by_kind.episodic + self.by_kind.profile


def _count(core: Core, kind: str) -> int:
    return list_page(core, None, kind, None, None, 1, 0, None, None).total_count


def never_recalled_count(core: Core) -> int:
    """How many live episodic memories recall never returned (a count, not a read)."""
    never = ListQuery(None, EPISODIC, None, None, 1, 0, "recent", (), recalled=False)
    return core.store.browse(never).total_count


def overview(core: Core) -> Overview:
    by_kind = KindCounts(episodic=_count(core, EPISODIC), profile=_count(core, PROFILE))
    total = by_kind.episodic + by_kind.profile
    newest = list_page(core, None, None, None, None, 1, 0, "recent", None)
    oldest = list_page(core, None, None, None, None, 1, max(total - 1, 0), "recent", None)
    stale = list_page(core, None, EPISODIC, None, None, EXAMPLES, 0, "stale", None)
    return Overview(
        by_kind=by_kind,
        never_recalled=never_recalled_count(core),
        never_recalled_examples=tuple(m for m in stale.memories if m.recall_count == 0),
        oldest=oldest.memories[0].created_at if oldest.memories else None,
        newest=newest.memories[0].created_at if newest.memories else None,
        current_time=newest.current_time,
    )
