"""The memory browser's guard over HTTP: access token, cookies, Host, Origin, CSRF, headers,
and hosted mode's tenancy gate in front of the mounted pages."""

from __future__ import annotations

import pytest

from tests.integration.web_support import BASE, TOKEN, csrf_of, fake_service, post_form, signed_in
from tinycontext.adapters.web.app import create_ui_app
from tinycontext.app.service_source import OneService
from tinycontext.config.allowed_hosts import allowed_hosts


@pytest.fixture
def service(tmp_path):
    svc = fake_service(tmp_path)
    svc.save([{"content": "The project uses SQLite for local state."}])
    return svc


@pytest.fixture
def app(service):
    return create_ui_app(OneService(service), token=TOKEN, hosts=allowed_hosts("127.0.0.1"))


def _memory_id(service):
    return service.list_page().to_dict()["memories"][0]["id"]


def test_every_page_needs_the_token(app, service):
    from starlette.testclient import TestClient

    client = TestClient(app, base_url=BASE, follow_redirects=False)
    for path in ("/", "/memories", "/ask?q=sqlite", f"/memory/{_memory_id(service)}",
                 "/export", "/export/download"):
        response = client.get(path)
        assert response.status_code == 401, path
        assert "SQLite" not in response.text
    assert client.get("/?token=wrong").status_code == 401
    client.cookies.set("tinycontext_ui_80", "wrong")
    assert client.get("/").status_code == 401


def test_the_link_sets_an_httponly_strict_cookie_and_drops_the_token(app):
    from starlette.testclient import TestClient

    client = TestClient(app, base_url=BASE, follow_redirects=False)
    first = client.get(f"/memories?token={TOKEN}&kind=episodic")
    assert first.status_code == 303
    assert first.headers["location"] == "/memories?kind=episodic"
    cookie = [c for c in first.headers.get_list("set-cookie") if c.startswith("tinycontext_ui_")]
    assert cookie and "HttpOnly" in cookie[0] and "SameSite=Strict" in cookie[0]
    assert client.get("/memories?kind=episodic").status_code == 200


def test_host_header_limited_to_loopback_names(app):
    client = signed_in(app)
    assert client.get("/", headers={"host": "127.0.0.1:9999"}).status_code == 200
    assert client.get("/", headers={"host": "localhost"}).status_code == 200
    refused = client.get("/", headers={"host": "evil.example"})
    assert refused.status_code == 421 and "SQLite" not in refused.text
    assert client.get("/", headers={"host": "127.0.0.1:9999@evil.example"}).status_code == 421


def test_security_headers_on_every_response(app):
    client = signed_in(app)
    for response in (client.get("/"), client.get("/nope"), client.get("/static/ui.css")):
        csp = response.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
        assert "unsafe-inline" not in csp
        assert response.headers["x-frame-options"] == "DENY"
        assert response.headers["x-content-type-options"] == "nosniff"
    assert "<script>" not in client.get("/").text  # only <script src=...>: no inline script


def test_changes_need_same_origin_and_csrf(app, service):
    client = signed_in(app)
    mid = _memory_id(service)
    token = csrf_of(client.get(f"/memory/{mid}").text)
    fields = {"content": "Changed.", "csrf": token}
    cross = post_form(client, f"/memory/{mid}/edit", fields, origin="http://evil.example")
    assert cross.status_code == 403
    missing = post_form(client, f"/memory/{mid}/edit", fields, origin=None)
    assert missing.status_code == 403
    forged = post_form(client, f"/memory/{mid}/edit", {**fields, "csrf": "guess"})
    assert forged.status_code == 400 and "security token" in forged.text
    no_field = post_form(client, f"/memory/{mid}/delete", {})
    assert no_field.status_code == 400
    # Nothing changed by any refused request.
    assert service.detail(mid).to_dict()["superseded_by"] is None
    assert service.list_page().to_dict()["total_count"] == 1
    ok = post_form(client, f"/memory/{mid}/edit", fields)
    assert ok.status_code == 303
    assert service.detail(mid).to_dict()["superseded_by"] is not None


def test_referer_counts_as_origin(app, service):
    client = signed_in(app)
    mid = _memory_id(service)
    token = csrf_of(client.get(f"/memory/{mid}").text)
    response = client.post(f"/memory/{mid}/delete", content=f"csrf={token}",
                           headers={"content-type": "application/x-www-form-urlencoded",
                                    "referer": f"{BASE}/memory/{mid}/delete"})
    assert response.status_code == 303
    assert service.list_page().to_dict()["total_count"] == 0


def test_hosted_pages_sit_behind_the_tenancy_gate(tmp_path):
    """Mounted in the REST app in hosted mode: unproven callers get 401, each proven user
    sees only their own store."""
    from starlette.testclient import TestClient

    from tinycontext.adapters.hosting.tenancy import Access, ProxyTrust
    from tinycontext.app.request_scope import current_scope
    from tinycontext.entry.web_ui import mount_ui, ui_app
    from tinycontext.rest import create_app

    stores = {"ann": fake_service(tmp_path / "a"), "bob": fake_service(tmp_path / "b")}
    stores["ann"].save([{"content": "Ann's secret garden plan."}])
    stores["bob"].save([{"content": "Bob likes trains."}])

    class PerUser:  # the Services of hosted mode, over the two fake stores
        def current(self):
            return stores[current_scope().caller.user_id]

        def warm(self):
            pass

        def close(self):
            pass

    import ipaddress

    proxy = b"p" * 40
    trust = ProxyTrust((ipaddress.ip_network("127.0.0.0/8"),), proxy)
    access = Access(trust)
    app = mount_ui(create_app(PerUser(), access=access, warm=False),
                   ui_app(PerUser(), hosts=None, access=access))
    client = TestClient(app, base_url=BASE, client=("127.0.0.1", 5000))
    assert client.get("/ui/memories").status_code == 401
    headers = {"x-tinycontext-proxy-token": proxy.decode()}
    ann = client.get("/ui/memories", headers={**headers, "x-tinycontext-user-id": "ann"})
    assert ann.status_code == 200 and "garden" in ann.text and "trains" not in ann.text
    bob = client.get("/ui/memories", headers={**headers, "x-tinycontext-user-id": "bob"})
    assert "trains" in bob.text and "garden" not in bob.text
    overview = client.get("/ui/", headers={**headers, "x-tinycontext-user-id": "ann"})
    assert overview.status_code == 200 and "Store file" not in overview.text  # operators only


@pytest.mark.parametrize("path", ["//evil.example/", "/%2F%2Fevil.example", "/%2fevil.example",
                                  "/\\evil.example/", "/%5Cevil.example", "///evil.example/x"])
def test_the_sign_in_link_redirects_only_to_a_path_of_this_site(app, path):
    from starlette.testclient import TestClient

    client = TestClient(app, base_url=BASE, follow_redirects=False)
    answer = client.get(f"{BASE}{path}?token={TOKEN}&kind=episodic")
    assert answer.status_code == 303
    location = answer.headers["location"]
    # One slash, then not a slash or backslash: a browser reads it as a path on this origin.
    assert location.startswith("/") and location[1:2] not in ("/", "\\"), location
    assert location.endswith("?kind=episodic")


def test_the_sign_in_page_says_how_long_the_link_works(app):
    from starlette.testclient import TestClient

    page = TestClient(app, base_url=BASE).get("/").text
    assert "one-time" not in page and "until the command stops" in page
