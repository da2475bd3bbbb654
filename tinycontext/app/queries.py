"""Management queries (SPEC section 8): the overview of one store, the one typed summary the
management Overview view and the web browser's overview page both read.

They read through the same store port as the six operations; adapters ask the service for
them instead of reaching its store.
"""

from __future__ import annotations

from dataclasses import dataclass

from tinycontext.domain.listing import ListQuery
from tinycontext.domain.memory import EPISODIC, PROFILE

from .browsing import listed
from .core import Core
from .results import ListedItem, Result

EXAMPLES = 5


@dataclass(frozen=True, kw_only=True)
class KindCounts(Result):
    episodic: int
    profile: int


@dataclass(frozen=True, kw_only=True)
class Overview(Result):
    """Live memories by kind; the never-recalled episodic ones (a count and the oldest few)
    and the most recalled few; the creation times of the oldest and newest live memory."""

    by_kind: KindCounts
    never_recalled: int
    never_recalled_examples: tuple[ListedItem, ...]
    most_recalled_examples: tuple[ListedItem, ...]
    oldest: str | None
    newest: str | None
    current_time: str

    @property
    def total(self) -> int:
        return self.by_kind.episodic + self.by_kind.profile


def _count(core: Core, kind: str | None = None, recalled: bool | None = None) -> int:
    # limit 0: the count only, no row read.
    query = ListQuery(None, kind, None, None, 0, 0, "recent", (), recalled=recalled)
    return core.store.browse(query).total_count


def _first(core: Core, query: ListQuery) -> tuple[ListedItem, ...]:
    page = core.store.browse(query)
    return tuple(listed(hit.memory, rank) for rank, hit in enumerate(page.memories, start=1))


def _examples(core: Core, sort: str, recalled: bool) -> tuple[ListedItem, ...]:
    return _first(core, ListQuery(None, EPISODIC, None, None, EXAMPLES, 0, sort, (),
                                  recalled=recalled, count=False))


def _created_at(core: Core, sort: str) -> str | None:
    """When the first live memory in `sort` order was created (None: an empty store)."""
    found = _first(core, ListQuery(None, None, None, None, 1, 0, sort, (), count=False))
    return found[0].created_at if found else None


def never_recalled_count(core: Core, profiles: int) -> int:
    """Live episodic memories no recall ever returned (profile memories ride along with every
    recall rather than being recalled, so they are not counted). Counted as every live
    never-recalled memory less the never-recalled profiles: two counts a store answers from
    its indexes (few memories are profiles), where kind and recall count together may not be."""
    recalled_profiles = _count(core, PROFILE, recalled=True) if profiles else 0
    return _count(core, recalled=False) - (profiles - recalled_profiles)


def overview(core: Core) -> Overview:
    by_kind = KindCounts(episodic=_count(core, EPISODIC), profile=_count(core, PROFILE))
    return Overview(
        by_kind=by_kind,
        never_recalled=never_recalled_count(core, by_kind.profile),
        never_recalled_examples=_examples(core, "stale", recalled=False),
        most_recalled_examples=_examples(core, "recalled", recalled=True),
        oldest=_created_at(core, "oldest"),
        newest=_created_at(core, "recent"),
        current_time=core.now(),
    )
