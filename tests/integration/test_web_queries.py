"""The memory browser reads only what a page shows: paging and re-sorting never count again
(totals are cached), and the SQLite plans of its sorts walk an index instead of sorting."""

from __future__ import annotations

import pytest

from tests.integration.web_support import TOKEN, fake_service, signed_in
from tinycontext.adapters.web import queries
from tinycontext.adapters.web.app import create_ui_app
from tinycontext.app.service_source import OneService


class CountingStore:
    """Wraps the fake store and records every browse query."""

    def __init__(self, inner):
        self.inner, self.queries = inner, []

    def browse(self, query):
        self.queries.append(query)
        return self.inner.browse(query)

    def __getattr__(self, name):
        return getattr(self.inner, name)


@pytest.fixture
def service(tmp_path):
    svc = fake_service(tmp_path)
    svc.save([{"content": f"Note {i} about the garden"} for i in range(120)], "s")
    svc.core.store = CountingStore(svc.core.store)
    return svc


def test_paging_counts_once_per_filter(service):
    client = signed_in(create_ui_app(OneService(service), token=TOKEN, hosts=None))
    store = service.store
    assert "120 memories" in client.get("/memories?session=s").text
    counted = [q for q in store.queries if q.count]
    assert len(counted) == 1
    for path in ("/memories?session=s&page=2", "/memories?session=s&page=3",
                 "/memories?session=s&sort=stale", "/memories?session=s&sort=recalled"):
        assert client.get(path).status_code == 200
    assert [q for q in store.queries if q.count] == counted  # cached: no new count
    pages = [q for q in store.queries if not q.count]
    assert all(q.limit == queries.PAGE_SIZE + 1 for q in pages)


def test_a_change_made_here_drops_the_cached_counts(service):
    page = queries.memories_page(service, session="s", kind=None, since=None, until=None,
                                 sort=None, search=None, superseded=False, page=1)
    assert page["total"] == 120
    queries.delete(service, page["rows"][0]["id"])
    again = queries.memories_page(service, session="s", kind=None, since=None, until=None,
                                  sort=None, search=None, superseded=False, page=1)
    assert again["total"] == 119


def test_sqlite_sorts_use_an_index(tmp_path):
    """The SQL of listing.browse for each web sort: no temporary sort of the whole table."""
    from tinycontext.adapters.sqlite.store import SqliteStore

    store = SqliteStore(tmp_path / "m.db")
    orders = {
        "recent": "m.created_at DESC, m.seq DESC",
        "stale": "m.recall_count ASC, m.last_recalled_at ASC, m.created_at ASC, m.seq ASC",
        "recalled": "m.recall_count DESC, m.last_recalled_at DESC, m.created_at DESC, "
                    "m.seq DESC",
    }
    for name, order in orders.items():
        plan = " ".join(str(row[-1]) for row in store._pool.read(
            "EXPLAIN QUERY PLAN SELECT m.id FROM memories m WHERE m.superseded_by IS NULL "
            f"ORDER BY {order} LIMIT 51 OFFSET 0", []))
        # A sort of every row would say "USE TEMP B-TREE FOR ORDER BY"; ordering ties of
        # the index's leading columns by seq ("FOR LAST TERM") stays a walk of one page.
        assert "TEMP B-TREE FOR ORDER BY" not in plan.upper(), (name, plan)
    live = "FROM memories m WHERE m.superseded_by IS NULL"
    counts = {  # the overview's counts: each reads one partial index, no table row
        f"SELECT count(*) {live} AND m.kind = ?": "memories_live_kind",
        f"SELECT count(*) {live} AND m.kind = ? AND m.created_at >= ? AND m.created_at <= ?":
            "memories_live_kind",
        f"SELECT count(*) {live} AND m.recall_count = 0": "memories_live_stale",
    }
    for sql, index in counts.items():
        plan = " ".join(str(row[-1]) for row in store._pool.read(
            "EXPLAIN QUERY PLAN " + sql, ["episodic", "2026-01-01", "2026-02-01"][
                :sql.count("?")]))
        assert f"COVERING INDEX {index}" in plan, (sql, plan)
    # The never-recalled count less the never-recalled profiles: recalled profiles are
    # counted from the profile rows only (kind and recall count together would read every
    # live episodic row).
    plan = " ".join(str(row[-1]) for row in store._pool.read(
        f"EXPLAIN QUERY PLAN SELECT count(*) {live} AND m.kind = ? AND m.recall_count > 0",
        ["profile"]))
    assert "INDEX memories_live_kind (kind=?)" in plan, plan
    sessions = " ".join(str(row[-1]) for row in store._pool.read(
        "EXPLAIN QUERY PLAN SELECT session_id, count(*) AS n FROM memories WHERE superseded_by "
        "IS NULL AND session_id IS NOT NULL GROUP BY session_id ORDER BY n DESC, session_id "
        "LIMIT 8", []))
    assert "COVERING INDEX memories_live_session" in sessions, sessions
    kind_stale = " ".join(str(row[-1]) for row in store._pool.read(
        "EXPLAIN QUERY PLAN SELECT m.id FROM memories m WHERE m.superseded_by IS NULL "
        f"AND +m.kind = ? AND m.recall_count > 0 ORDER BY {orders['recalled']} LIMIT 6",
        ["episodic"]))
    assert "TEMP B-TREE FOR ORDER BY" not in kind_stale.upper(), kind_stale
    replaced = " ".join(str(row[-1]) for row in store._pool.read(
        "EXPLAIN QUERY PLAN SELECT m.id FROM memories m WHERE m.superseded_by IS NOT NULL "
        "ORDER BY m.created_at DESC, m.seq DESC LIMIT 51", []))
    assert "memories_replaced" in replaced and "TEMP B-TREE" not in replaced.upper(), replaced
    store.close()


def test_sqlite_keyword_search_is_driven_by_the_keyword_index(tmp_path):
    """With search plus session, kind or dates, FTS5 drives: a walk of the session index
    asking FTS5 about each row took 21 s for one count at 100,000 memories."""
    from tinycontext.adapters.sqlite.store import SqliteStore
    from tinycontext.domain.listing import build_list_query

    store = SqliteStore(tmp_path / "m.db")
    store.session_exists("x")  # opens the file
    seen = []
    read = store._pool.read

    def recording(sql, params=()):
        seen.append((sql, list(params)))
        return read(sql, params)

    store._pool.read = recording
    for sort in (None, "recent", "stale"):
        query = build_list_query("s", "episodic", "2026-01-01", "2026-02-01", 51, 0, sort,
                                 "team notes")
        store.browse(query)
    store._pool.read = read
    assert len(seen) == 6
    for sql, params in seen:
        plan = [str(row[-1]) for row in read("EXPLAIN QUERY PLAN " + sql, params)]
        assert "memory_fts VIRTUAL TABLE" in plan[0], (sql, plan)
    store.close()
