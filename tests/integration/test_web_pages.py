"""The memory browser's pages over HTTP with the public fakes: what each page shows, the
filters, search highlighting, Ask's scores and budget line, edit/delete through the service,
export, readable errors, and escaping of hostile content."""

from __future__ import annotations

import json
import re

import pytest

from tests.integration.web_support import TOKEN, csrf_of, fake_service, post_form, signed_in
from tinycontext.adapters.web.app import create_ui_app
from tinycontext.app.service_source import OneService

HOSTILE = [
    "<script>window.pwned = 1</script> remember this",
    '<img src=x onerror="window.pwned = 2"> an image note',
    "javascript:alert(document.cookie) is a link text",
]


@pytest.fixture
def service(tmp_path):
    svc = fake_service(tmp_path)
    clock = svc.clock
    svc.save([{"content": "The project uses SQLite for local state."}], "work")
    clock.advance(86400 * 40)
    svc.save([{"content": "Deploys happen on Fridays after lunch."}], "work")
    clock.advance(60)
    svc.save([{"content": "The user likes green tea in the morning."}], "home")
    svc.save([{"content": "Call the user Sam.", "kind": "profile"}])
    return svc


@pytest.fixture
def client(service):
    return signed_in(create_ui_app(OneService(service), token=TOKEN, hosts=None))


def _id(service, text):
    return next(m["id"] for m in service.list_page(search=text).to_dict()["memories"])


def test_overview_counts_chart_and_setup(client):
    page = client.get("/").text
    assert re.search(r'class="big">4</span> memories', page)
    assert re.search(r'class="big">3</span> episodic', page)
    assert re.search(r'class="big">1</span> profile', page)
    assert re.search(r'class="big">3</span> never recalled', page)
    assert "2026-07" in page and "2026-09" in page  # months of the chart
    assert "2026-06" not in page  # a young store's chart starts at its first month
    assert "Embedding model" in page and "Store file" in page  # local user is the operator


def test_empty_store_says_what_to_do(tmp_path):
    client = signed_in(create_ui_app(OneService(fake_service(tmp_path)), token=TOKEN, hosts=None))
    overview = client.get("/").text
    assert "No memories yet." in overview and "recalled at least once" not in overview
    assert "No memories match" in client.get("/memories").text


def test_memories_table_filters_and_sorts(client, service):
    page = client.get("/memories").text
    assert page.index("green tea") < page.index("Fridays") < page.index("SQLite")
    only_work = client.get("/memories?session=work").text
    assert "SQLite" in only_work and "green tea" not in only_work
    profile = client.get("/memories?kind=profile").text
    assert "Call the user Sam." in profile and "SQLite" not in profile
    dated = client.get("/memories?since=2026-09-01&until=2026-09-30").text
    assert "Fridays" in dated and "SQLite" not in dated
    service.recall("green tea morning")
    recalled = client.get("/memories?sort=recalled").text
    assert recalled.index("green tea") < recalled.index("SQLite")
    stale = client.get("/memories?sort=stale").text
    assert stale.index("SQLite") < stale.index("green tea")


def test_search_highlights_matches_escaped(client, service):
    service.save([{"content": "Tea <b>bold</b> & teapots"}])
    page = client.get("/memories?q=tea").text
    assert "<mark>tea</mark>" in page and "<mark>Tea</mark>" in page
    assert "<mark>teapots</mark>" in page  # each word is a prefix
    both = client.get("/memories?q=teap+bol").text  # every word, not only the last
    assert "<mark>teapots</mark>" in both and "<mark>bold</mark>" in both
    assert "&lt;b&gt;bold&lt;/b&gt; &amp;" in page and "<b>bold</b>" not in page
    assert "SQLite" not in page


def test_paging_keeps_the_filters(client, service):
    service.save([{"content": f"Note number {i} about paging"} for i in range(60)],
                 "bulk")
    first = client.get("/memories?session=bulk").text
    assert "page 1 of 2" in first and 'rel="next"' in first
    link = re.search(r'rel="next" href="([^"]+)"', first).group(1).replace("&amp;", "&")
    assert "session=bulk" in link and "page=2" in link
    second = client.get(link).text
    assert "page 2 of 2" in second and second.count("<tr>") == 1 + 10


def test_superseded_filter_and_detail_chain(client, service):
    old = _id(service, "Fridays")
    new = service.update(old, "Deploys happen on Thursdays.").to_dict()["id"]
    live = client.get("/memories").text
    assert "Thursdays" in live and "Fridays" not in live
    history = client.get("/memories?show=superseded").text
    assert "Fridays" in history and "Thursdays" not in history
    detail = client.get(f"/memory/{new}").text
    assert "Thursdays" in detail and "Fridays" in detail and "older" in detail
    old_page = client.get(f"/memory/{old}").text
    assert "was replaced" in old_page and '/edit"' not in old_page.split("Delete")[0]


def test_ask_shows_order_scores_budget_and_profile_without_counting(client, service):
    page = client.get("/ask?q=green+tea+morning&max_tokens=20").text
    assert "Call the user Sam." in page  # the profile block
    assert re.search(r'class="label (high|medium|low)"', page)
    rows = re.findall(r'<td class="num">(\d\.\d{3})</td>', page)
    assert rows, "no fused scores shown"
    assert "Token budget of 20 reached" in page
    assert page.index("green tea") < page.index("Token budget of 20 reached")
    assert all(m["recall_count"] == 0 for m in service.list_page().to_dict()["memories"])


def test_ask_without_a_budget_cut_has_no_line(client):
    page = client.get("/ask?q=green+tea").text
    assert "Token budget of" not in page and "green tea" in page


def test_edit_supersedes_through_the_service(client, service):
    mid = _id(service, "green tea")
    token = csrf_of(client.get(f"/memory/{mid}").text)
    done = post_form(client, f"/memory/{mid}/edit",
                     {"content": "The user likes black coffee.", "csrf": token})
    assert done.status_code == 303
    follow = client.get(done.headers["location"]).text
    assert "Saved as a new version" in follow and "black coffee" in follow
    assert service.detail(mid).to_dict()["superseded_by"] is not None
    again = post_form(client, f"/memory/{mid}/edit", {"content": "x y", "csrf": token})
    assert again.status_code == 409 and "memory_already_superseded" in again.text


def test_blank_edit_is_a_readable_error_and_changes_nothing(client, service):
    mid = _id(service, "green tea")
    token = csrf_of(client.get(f"/memory/{mid}").text)
    bad = post_form(client, f"/memory/{mid}/edit", {"content": "  \u200b ", "csrf": token})
    assert bad.status_code == 400 and "empty_memory" in bad.text
    assert "Nothing was changed" in bad.text
    assert service.detail(mid).to_dict()["superseded_by"] is None


def test_delete_confirmation_names_the_version_that_comes_back(client, service):
    old = _id(service, "Fridays")
    new = service.update(old, "Deploys happen on Thursdays.").to_dict()["id"]
    confirm = client.get(f"/memory/{new}/delete").text
    assert "live again" in confirm and "Fridays" in confirm
    token = csrf_of(confirm)
    done = post_form(client, f"/memory/{new}/delete", {"csrf": token})
    assert done.status_code == 303 and done.headers["location"] == "/memories?done=restored"
    shown = client.get(done.headers["location"]).text
    assert "older version it had replaced is live again" in shown
    assert service.detail(old).to_dict()["superseded_by"] is None
    assert "Fridays" in client.get("/memories").text


def test_errors_are_readable_pages(client):
    missing = client.get("/memory/000000000000")
    assert missing.status_code == 404 and "memory_not_found" in missing.text
    assert client.get("/memories?session=nope").status_code == 404
    bad_date = client.get("/memories?since=yesterday")
    assert bad_date.status_code == 400 and "invalid_request" in bad_date.text
    assert client.get("/memories?page=abc").status_code == 400
    assert client.get("/ask?q=tea&top_k=0").status_code == 400


@pytest.mark.parametrize("action", ["edit", "delete"])
def test_an_unexpected_failure_in_a_change_is_the_error_page(service, monkeypatch, action,
                                                             caplog):
    # A bug below the service (not a TinyContextError) must give the same page as on every
    # other route: a stable code, nothing of the memory, no stack trace.
    from starlette.testclient import TestClient

    leak = "private words of the memory"

    def boom(*args, **kwargs):
        raise RuntimeError(f"failed on {leak}")

    mid = _id(service, "green tea")
    monkeypatch.setattr(service, {"edit": "update", "delete": "delete"}[action],
                        boom)
    app = create_ui_app(OneService(service), token=TOKEN, hosts=None)
    client = TestClient(app, base_url="http://127.0.0.1", follow_redirects=False,
                        raise_server_exceptions=False)
    assert client.get(f"/?token={TOKEN}").status_code == 303
    token = csrf_of(client.get(f"/memory/{mid}").text)
    fields = {"csrf": token} | ({"content": "The user likes black coffee."}
                                if action == "edit" else {})
    response = post_form(client, f"/memory/{mid}/{action}", fields)
    assert response.status_code == 500
    assert "internal_error" in response.text and "That did not work" in response.text
    assert leak not in response.text and "Traceback" not in response.text
    assert "RuntimeError" not in response.text
    assert service.detail(mid).to_dict()["superseded_by"] is None
    # The log names the failure and where it happened, never what its message quoted.
    assert "RuntimeError" in caplog.text and "boom" in caplog.text
    assert leak not in caplog.text


def test_export_downloads_the_cli_json_lines(client, service):
    response = client.get("/export/download")
    assert response.status_code == 200 and "attachment" in response.headers["content-disposition"]
    lines = [json.loads(line) for line in response.text.splitlines()]
    assert len(lines) == 4 and {"id", "content", "embedding"} <= set(lines[0])
    assert all(line["embedding"] is None for line in lines)
    work = client.get("/export/download?session=work&embeddings=1").text.splitlines()
    assert len(work) == 2 and all(json.loads(line)["embedding"] for line in work)
    assert client.get("/export/download?session=never").status_code == 404
    assert "Download" in client.get("/export").text


@pytest.mark.parametrize("content", HOSTILE)
def test_hostile_content_is_shown_as_text(client, service, content):
    service.save([{"content": content}])
    mid = service.list_page(limit=1).to_dict()["memories"][0]["id"]
    for path in ("/", "/memories", "/memories?q=remember+image+link", f"/memory/{mid}",
                 f"/memory/{mid}/delete", "/ask?q=remember+image+link+text"):
        page = client.get(path).text
        assert "<script>window" not in page and "<img src=x" not in page, path
        assert 'href="javascript:' not in page, path
    detail = client.get(f"/memory/{mid}").text
    escaped = content.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    assert escaped.replace('"', "&#34;") in detail or escaped in detail


def test_sessions_listed_with_counts_and_offered_in_the_filters(client, service):
    service.save([{"content": "A note in an odd session."}], '"><b>odd</b>')
    page = client.get("/").text
    assert re.search(r'session=work">work</a> <span class="muted">2</span>', page)
    assert "&#34;&gt;&lt;b&gt;odd&lt;/b&gt;" in page and "<b>odd</b>" not in page
    assert "session=%22%3E%3Cb%3Eodd%3C%2Fb%3E" in page  # the link's query is URL-encoded
    memories = client.get("/memories").text
    assert '<datalist id="session-names">' in memories and '<option value="home">' in memories
    assert "<b>odd</b>" not in client.get("/ask").text


def test_a_session_that_looks_like_a_secret_is_refused_on_every_page(client):
    token = "ghp_5FWqS0UW13SlKKby36dyp5qaOveMCPvenqsV"
    for path in (f"/memories?session={token}", f"/ask?q=deploys&session={token}",
                 f"/export/download?session={token}"):
        answer = client.get(path)
        assert answer.status_code == 400, path
        assert "looks like a secret" in answer.text


@pytest.mark.parametrize("path, title", [("/memories", "Memories"), ("/ask", "Ask")])
def test_the_title_is_only_the_page_name(client, path, title):
    page = client.get(path).text
    shown = re.search(r"<title>(.*?)</title>", page, re.S)
    assert shown is not None and shown.group(1) == f"{title} · TinyContext"
    # The session names are offered once, in the page's own datalist.
    assert page.count('<datalist id="session-names">') == 1
    assert '<option value="work">' in page.split("</title>", 1)[1]
