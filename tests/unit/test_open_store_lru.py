"""Hosted mode's open-store LRU at its limit: nothing closes at max_open, the least recently
used store closes at max_open + 1, and a store used again in between is kept."""

from __future__ import annotations

import threading
from pathlib import Path

from tinycontext.adapters.hosting.tenant_stores import TenantStores


class _Service:
    def __init__(self, path: Path, closed: list[Path]) -> None:
        self.path, self._closed = path, closed

    def close(self) -> None:
        self._closed.append(self.path)


def _wait_for(closed: list[Path], count: int) -> None:
    done = threading.Event()
    for _ in range(200):
        if len(closed) >= count:
            return
        done.wait(0.01)


def test_at_the_limit_nothing_closes_and_one_more_closes_the_least_recently_used(
    tmp_path: Path,
) -> None:
    closed: list[Path] = []
    stores = TenantStores(tmp_path, b"k" * 32, lambda p: _Service(p, closed), max_open=3)  # type: ignore[arg-type,return-value]

    def use(user: str) -> Path:
        key, service = stores.acquire(user)
        stores.release(key, service)
        return service.path  # type: ignore[attr-defined, no-any-return]

    paths = {user: use(user) for user in ("a", "b", "c")}
    assert stores.open_count == 3 and stores.evicted == 0
    assert use("a") == paths["a"] and stores.opened == 3  # served open: a is now most recent
    paths["d"] = use("d")  # one over the limit: b, the least recently used, is closed
    _wait_for(closed, 1)
    assert closed == [paths["b"]] and stores.open_count == 3 and stores.evicted == 1
    use("b")  # reopened, which evicts c (a and d were used after it)
    _wait_for(closed, 2)
    assert closed == [paths["b"], paths["c"]] and stores.opened == 5
    stores.close()
    assert sorted(closed) == sorted([paths["b"], paths["c"], paths["a"], paths["d"],
                                     paths["b"]])
