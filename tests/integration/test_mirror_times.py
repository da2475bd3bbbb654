"""Time windows and "as of" masked in the vector mirrors stay exact while the store changes:
after saves, updates (a version moves to the mirror of replaced versions) and deletes in the
same process, and after reopening, every filtered search returns exactly the versions a
brute-force check of the rows lets through."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from tests.fakes import FixedClock, HashEmbedder, WordTokenizer
from tinycontext.adapters.sqlite import driver as sqlite_driver
from tinycontext.adapters.sqlite import mirror_times
from tinycontext.adapters.sqlite.store import SqliteStore
from tinycontext.config.engine import TinyContextConfig
from tinycontext.domain.filters import build_filter
from tinycontext.entry.container import build_service
from tinycontext.ports.store import Scope

HOUR = 3600


def _service(path: Path, clock: FixedClock):  # type: ignore[no-untyped-def]
    return build_service(
        TinyContextConfig(memory_db_path=str(path)), store=SqliteStore(path),
        embedder=HashEmbedder(), tokenizer=WordTokenizer(), clock=clock, background=False,
    )


def _rows(path: Path) -> list[tuple[str, str, str | None, str | None]]:
    """The versions dense search can see: those with a vector (a memory whose context
    changed waits for its new one)."""
    conn = sqlite_driver.sqlite_module().connect(str(path))
    try:
        return conn.execute(
            "SELECT id, created_at, superseded_at, superseded_by FROM memories "
            "WHERE embedding IS NOT NULL").fetchall()
    finally:
        conn.close()


def _check(service, path: Path, moments: list[str]) -> int:  # type: ignore[no-untyped-def]
    """Every moment as "as of", and as a window's edges, against the rows themselves."""
    vector = service.embedder.embed(["what happened then"])[0]
    rows = _rows(path)
    checked = 0
    for moment in moments:
        cases = [
            (build_filter(as_of=moment), {r[0] for r in rows if r[1] <= moment
                                          and (r[3] is None or (r[2] or "") > moment)}),
            (build_filter(since=moment), {r[0] for r in rows if r[3] is None and r[1] >= moment}),
            (build_filter(until=moment), {r[0] for r in rows if r[3] is None and r[1] <= moment}),
        ]
        for filters, expected in cases:
            found = service.store.nearest(vector, service.model_key,
                                          Scope("episodic", filters=filters), 200)
            assert {h.memory.id for h in found} == expected, (filters, moment)
            checked += len(expected)
    return checked


@pytest.mark.parametrize("whole", [False, True])
def test_masks_follow_saves_updates_and_deletes(db_path: Path, monkeypatch, whole) -> None:
    """`whole`: times are read by one scan of an index instead of by seq."""
    if whole:
        monkeypatch.setattr(mirror_times, "WHOLE_READ_FROM", 0)
    clock = FixedClock()
    service = _service(db_path, clock)
    refs = []
    for i in range(8):
        refs.append(service.save([{"content": f"event number {i} of the log"}]).to_dict()
                    ["saved"][0]["ref"])
        clock.advance(HOUR)
    stamps = sorted({r[1] for r in _rows(db_path)})
    moments = [stamps[0], stamps[3], stamps[-1], "2000-01-01T00:00:00Z", "2100-01-01T00:00:00Z"]
    assert _check(service, db_path, moments) > 0  # the mirrors' times are read here

    # New versions, a delete and new memories: slots added to both mirrors, one killed.
    for ref in refs[:3]:
        clock.advance(HOUR)
        service.update(ref, f"revised {ref} entry")
    service.delete(refs[5])
    clock.advance(HOUR)
    service.save([{"content": "a late addition"}])
    stamps = sorted({t for r in _rows(db_path) for t in r[1:3] if t})
    halfway = [(datetime.strptime(t, "%Y-%m-%dT%H:%M:%SZ") + timedelta(minutes=30))
               .strftime("%Y-%m-%dT%H:%M:%SZ") for t in stamps]
    assert _check(service, db_path, stamps + halfway) > 0
    assert any(model_id < 0 for model_id in service.store._search._mirrors)
    service.close()

    reopened = _service(db_path, clock)
    assert _check(reopened, db_path, stamps + halfway) > 0
    reopened.close()
