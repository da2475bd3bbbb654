"""Supersede links of memories that come from outside: an import file, a salvaged store.

Only the newest version of a memory is live. A memory superseded by an id that does not
exist, or by a chain of versions that loops back on itself, has no live version at all and
vanishes from list and recall. These checks find such links before anything is stored.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

FIELDS = ("superseded_by", "supersedes")


@dataclass(frozen=True, slots=True)
class Links:
    """The two supersede links of one memory (either may be None)."""

    superseded_by: str | None = None
    supersedes: str | None = None

    def target(self, field: str) -> str | None:
        return self.superseded_by if field == FIELDS[0] else self.supersedes


@dataclass(frozen=True, slots=True)
class LinkProblem:
    """A link that cannot be stored: `memory_id`'s `field` points at `target`.

    `cycle` lists the memories of a loop in link order, starting with `memory_id`, the
    member that comes first in the caller's mapping (the earliest line of a file)."""

    memory_id: str
    field: str
    target: str
    cycle: tuple[str, ...] = ()
    note: str = ""

    def describe(self) -> str:
        if self.note:
            return self.note
        if self.target == self.memory_id:
            return f"{self.field} points at the memory itself"
        if self.cycle:
            loop = " -> ".join([*self.cycle, self.cycle[0]])
            return f"{self.field} links form a cycle ({loop}), so no version would stay live"
        return f"{self.field} points at {self.target}, which is neither in the file nor stored"


def link_problems(
    links: Mapping[str, Links], exists: Callable[[str], bool]
) -> list[LinkProblem]:
    """Every self-link, link to an id that is not in `links` and not `exists`, and cycle.

    `links` holds the memories that have links (insertion order decides which member of a
    cycle it is reported on); `exists` says whether any other id is known (file or store)."""
    problems: list[LinkProblem] = []
    for memory_id, own in links.items():
        for field in FIELDS:
            target = own.target(field)
            if target is None:
                continue
            if target == memory_id or (target not in links and not exists(target)):
                problems.append(LinkProblem(memory_id, field, target))
    order = {memory_id: i for i, memory_id in enumerate(links)}
    for field in FIELDS:
        for cycle in _cycles(links, field):
            first = min(range(len(cycle)), key=lambda i: order[cycle[i]])
            turned = cycle[first:] + cycle[:first]
            problems.append(LinkProblem(turned[0], field, turned[1], tuple(turned)))
    return problems


def link_mismatches(
    links: Mapping[str, Links], view: Callable[[str], Links | None],
    stored: Callable[[str], bool],
) -> list[LinkProblem]:
    """Links whose other end does not name the memory back, for the new memories `links`.

    Deleting a version makes the one it `supersedes` live again, so both ends must agree: a
    memory superseded_by B while B supersedes another (or nothing) would stay hidden for
    good. `view(id)` gives the links of any known memory (a stored one as stored); a stored
    live predecessor may be continued (the import marks it superseded), but a predecessor
    claimed by two memories may not."""
    problems: list[LinkProblem] = []
    claimed: dict[str, str] = {}
    for memory_id, own in links.items():
        newer = own.superseded_by
        other = None if newer is None else view(newer)
        if newer is not None and other is not None and other.supersedes != memory_id:
            says = other.supersedes or "nothing"
            problems.append(LinkProblem(memory_id, FIELDS[0], newer, note=(
                f"superseded_by points at {newer}, which says it supersedes {says}: both "
                "versions must name each other"
            )))
        older = own.supersedes
        if older is None:
            continue
        other = view(older)
        after = None if other is None else other.superseded_by
        if other is not None and after != memory_id and not (after is None and stored(older)):
            problems.append(LinkProblem(memory_id, FIELDS[1], older, note=(
                f"supersedes points at {older}, which says it is superseded by "
                f"{after or 'nothing'}: both versions must name each other"
            )))
        elif older in claimed:
            problems.append(LinkProblem(memory_id, FIELDS[1], older, note=(
                f"supersedes points at {older}, which {claimed[older]} supersedes too: a "
                "version has one newer version"
            )))
        claimed.setdefault(older, memory_id)
    return problems


def _cycles(links: Mapping[str, Links], field: str) -> list[tuple[str, ...]]:
    """Loops of two or more memories following `field` (each memory has at most one link,
    so a walk from every unvisited memory finds each loop once, in linear time)."""
    done: set[str] = set()
    found: list[tuple[str, ...]] = []
    for start in links:
        path: list[str] = []
        on_path: dict[str, int] = {}
        node: str | None = start
        while node is not None and node in links and node not in done and node not in on_path:
            on_path[node] = len(path)
            path.append(node)
            node = links[node].target(field)
        if node is not None and node in on_path and len(path) - on_path[node] > 1:
            found.append(tuple(path[on_path[node]:]))
        done.update(path)
    return found


def mend_links(links: dict[str, Links], ids: Mapping[str, int]) -> int:
    """Make the links among the memories `ids` (id -> position, oldest first) storable, in
    place; returns how many links were changed.

    A version missing between two present ones is bridged (the older now points at the
    newer, as deleting it would have done); other links to missing memories are dropped, and
    a loop is cut at its newest member, which becomes the live version."""
    changed: set[tuple[str, str]] = set()
    older: dict[str, list[str]] = {}
    newer: dict[str, list[str]] = {}
    for memory_id, own in links.items():
        if own.superseded_by is not None and own.superseded_by not in ids:
            older.setdefault(own.superseded_by, []).append(memory_id)
        if own.supersedes is not None and own.supersedes not in ids:
            newer.setdefault(own.supersedes, []).append(memory_id)
    for lost, before in older.items():
        after = newer.get(lost, [])
        if len(before) == 1 and len(after) == 1 and before != after:
            links[before[0]] = replace(links[before[0]], superseded_by=after[0])
            links[after[0]] = replace(links[after[0]], supersedes=before[0])
            changed |= {(before[0], FIELDS[0]), (after[0], FIELDS[1])}
    while problems := link_problems(links, ids.__contains__):
        for problem in problems:
            victim = problem.memory_id
            if problem.cycle and problem.field == FIELDS[0]:
                victim = max(problem.cycle, key=ids.__getitem__)
            links[victim] = replace(links[victim], **{problem.field: None})
            changed.add((victim, problem.field))
    return len(changed)
