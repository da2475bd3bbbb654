"""The keyword side under a broad filter starts from FTS5's best matches (as for the whole
store) and looks up only their rows; a narrow one lets the qualifying rows drive. Both must
give the same answer: the filter's own best matches, never a short list."""

from __future__ import annotations

from pathlib import Path

import pytest

from tinycontext.adapters.sqlite import search as sqlite_search
from tinycontext.adapters.sqlite.store import SqliteStore
from tinycontext.domain.filters import build_filter
from tinycontext.domain.memory import Memory
from tinycontext.ports.store import NewMemory, Scope

WORDS = ["river", "bridge", "garden", "market", "harbour", "tower", "forest", "meadow"]


def _store(path: Path) -> SqliteStore:
    store = SqliteStore(path)
    items = []
    for i in range(600):
        # Each memory has two of the words (one of them often), so a query matches hundreds
        # of memories at many different scores.
        text = f"{WORDS[i % 8]} {WORDS[(i * 7) % 8]} " + " ".join(
            WORDS[(i // 3) % 8] for _ in range(1 + i % 4))
        day = 1 + i % 28
        items.append(NewMemory(Memory(
            f"00000000-0000-4000-8000-{i:012x}", text, "episodic", None,
            f"2026-02-{day:02d}T00:00:00Z", 6, tags=("half",) if i % 2 else ("rare",)
            if i % 50 == 0 else ()), None))
    store.add(items)
    return store


@pytest.mark.parametrize("filters", [
    {"tags": ["half"]}, {"tags": ["rare"]}, {"since": "2026-02-20"}, {"until": "2026-02-20"},
    {"as_of": "2026-02-15"},
])
def test_broad_and_narrow_paths_agree(db_path: Path, monkeypatch, filters) -> None:
    db_path.parent.mkdir()
    store = _store(db_path)
    scope = Scope("episodic", filters=build_filter(**filters))
    answers = []
    for broad in (0.0, 2.0):  # every filter searched from the best matches; none
        monkeypatch.setattr(sqlite_search, "BROAD", broad)
        found = store.keyword_search([["river"], ["garden"]], scope, 30)
        answers.append([(h.memory.id, round(h.score, 9)) for h in found])
    # The same scores; the same memories wherever a score is not tied (ties at the cut of
    # the best matches may be broken differently, as for the whole store).
    assert [score for _, score in answers[0]] == [score for _, score in answers[1]]
    scores = [score for _, score in answers[0]]
    assert [a for a in answers[0] if scores.count(a[1]) == 1] \
        == [a for a in answers[1] if scores.count(a[1]) == 1]
    assert len(answers[0]) == (9 if filters == {"tags": ["rare"]} else 30)
    store.close()
