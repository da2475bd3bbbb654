"""Several processes saving and recalling on one database file lose nothing and never lock."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

WORKERS = 4
SAVES_PER_WORKER = 40


def _worker(path: str, worker: int, errors: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    from tests.fakes import HashEmbedder, WordTokenizer
    from tinycontext.adapters.sqlite.store import SqliteStore
    from tinycontext.adapters.system.clock import SystemClock
    from tinycontext.config.engine import TinyContextConfig
    from tinycontext.entry.container import build_service

    try:
        service = build_service(
            TinyContextConfig(memory_db_path=path), store=SqliteStore(path),
            embedder=HashEmbedder(), tokenizer=WordTokenizer(), clock=SystemClock(),
            background=False,
        )
        for i in range(SAVES_PER_WORKER):
            service.save(
                [{"content": f"worker {worker} wrote fact {i} with code W{worker}X{i}"}],
                session_id=f"w{worker}",
            )
            service.recall(f"fact {i} code", top_k=5)
            if i % 10 == 0:
                service.list_page(limit=5)
        service.close()
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        errors.put(f"{type(exc).__name__}: {exc}")


def test_processes_share_one_file_without_losing_writes(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.db")
    ctx = multiprocessing.get_context("spawn")
    errors = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(path, w, errors)) for w in range(WORKERS)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(timeout=300)
        assert proc.exitcode == 0
    problems = []
    while not errors.empty():
        problems.append(errors.get())
    assert problems == []

    from tinycontext.adapters.sqlite.store import SqliteStore
    from tinycontext.domain.listing import build_list_query

    store = SqliteStore(path)
    page = store.browse(build_list_query(None, None, None, None, 1, 0, "recent", None))
    assert page.total_count == WORKERS * SAVES_PER_WORKER
    for worker in range(WORKERS):
        assert store.session_exists(f"w{worker}")
    store.close()
