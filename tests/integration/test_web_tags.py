"""The memory browser's tags and "as of": chips that filter, the tags filter, editing tags
and the version of a memory current on a date."""

from __future__ import annotations

import pytest

from tests.integration.web_support import TOKEN, csrf_of, fake_service, post_form, signed_in
from tinycontext.adapters.web.app import create_ui_app
from tinycontext.app.service_source import OneService


@pytest.fixture
def service(tmp_path):
    svc = fake_service(tmp_path)
    svc.save([{"content": "Billing runs on PostgreSQL.", "tags": ["billing", "db"],
               "metadata": {"owner": "ana"}}])
    svc.clock.advance(86400 * 10)
    svc.save([{"content": "Lunch is at noon.", "tags": ["office"]}])
    return svc


@pytest.fixture
def client(service):
    return signed_in(create_ui_app(OneService(service), token=TOKEN, hosts=None))


def _id(service, text):
    return next(m["id"] for m in service.list_page(search=text).to_dict()["memories"])


def test_tag_chips_filter_the_table(client):
    page = client.get("/memories").text
    assert 'class="chip" href="/memories?tags=billing"' in page
    only = client.get("/memories?tags=billing").text
    assert "Billing runs" in only and "Lunch" not in only
    assert "Lunch" in client.get("/memories?tags=office").text
    assert "No memories match" in client.get("/memories?tags=billing+office").text
    bad = client.get("/memories?tags=%3Cb%3E")
    assert bad.status_code == 400 and "invalid_request" in bad.text


def test_detail_shows_tags_and_metadata_and_edits_tags(client, service):
    mid = _id(service, "Billing")
    page = client.get(f"/memory/{mid}").text
    assert '>billing</a>' in page and "owner" in page and "ana" in page
    token = csrf_of(page)
    done = post_form(client, f"/memory/{mid}/edit", {
        "content": "Billing runs on PostgreSQL.", "tags": "billing, decision", "csrf": token})
    assert done.status_code == 303
    new = service.detail(done.headers["location"].split("/memory/")[1].split("?")[0]).to_dict()
    assert new["tags"] == ["billing", "decision"] and new["metadata"] == {"owner": "ana"}
    bad = post_form(client, f"/memory/{new['id']}/edit",
                    {"content": "x", "tags": "no!", "csrf": token})
    assert bad.status_code == 400 and service.detail(new["id"]).to_dict()["superseded_by"] is None


def test_as_of_views(client, service):
    mid = _id(service, "Billing")
    service.clock.advance(86400 * 30)
    newer = service.update(mid, "Billing runs on MySQL.").to_dict()
    start = service.detail(mid).to_dict()["created_at"][:10]
    then = client.get(f"/memory/{newer['id']}?as_of={start}").text
    assert "As of " + start in then and "PostgreSQL" in then.split("Versions")[0]
    table = client.get(f"/memories?as_of={start}").text
    assert "PostgreSQL" in table and "MySQL" not in table and "Lunch" not in table
    before = client.get(f"/memory/{mid}?as_of=2020-01-01")
    assert before.status_code == 404
