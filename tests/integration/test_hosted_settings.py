"""Startup validation of hosted mode and management, and the identity checks themselves."""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path

import pytest

from tests.integration.hosted_support import OPERATOR, SECRET, TOKEN, hosted_env
from tinycontext.adapters.hosting.tenancy import Access, ProxyTrust, check_user_id
from tinycontext.app.callers import Refused
from tinycontext.hosted.settings import HostedConfigError, load_server_settings


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "tenants"
    folder.mkdir(mode=0o700)
    return folder


def _refusal(env: dict[str, str], transport: str = "http") -> str:
    with pytest.raises(HostedConfigError) as caught:
        load_server_settings(env, transport=transport)  # type: ignore[arg-type]
    return caught.value.message


def test_valid_hosted_settings(store_dir: Path) -> None:
    settings = load_server_settings(hosted_env(
        store_dir, TINYCONTEXT_TRUSTED_PROXY_CIDRS="10.0.0.5/32, 172.20.0.0/16 ::1/128",
        TINYCONTEXT_MAX_OPEN_STORES="8", TINYCONTEXT_USER_HEADER="X-Auth-Request-User"))
    assert settings.tenancy and settings.store_dir == store_dir.resolve()
    assert [str(n) for n in settings.networks] == ["10.0.0.5/32", "172.20.0.0/16", "::1/128"]
    assert settings.max_open_stores == 8 and settings.user_header == "X-Auth-Request-User"
    assert SECRET not in repr(settings) and TOKEN not in repr(settings)


@pytest.mark.parametrize("change,needle", [
    ({"TINYCONTEXT_TENANT_SECRET": ""}, "TINYCONTEXT_TENANT_SECRET is required"),
    ({"TINYCONTEXT_TENANT_SECRET": "s" * 31}, "TINYCONTEXT_TENANT_SECRET is 31 bytes"),
    ({"TINYCONTEXT_TRUSTED_PROXY_TOKEN": ""}, "TINYCONTEXT_TRUSTED_PROXY_TOKEN is required"),
    ({"TINYCONTEXT_TRUSTED_PROXY_TOKEN": "t" * 20}, "TINYCONTEXT_TRUSTED_PROXY_TOKEN is 20 bytes"),
    ({"TINYCONTEXT_TRUSTED_PROXY_TOKEN": SECRET}, "must differ from TINYCONTEXT_TENANT_SECRET"),
    ({"TINYCONTEXT_TRUSTED_PROXY_CIDRS": ""}, "TINYCONTEXT_TRUSTED_PROXY_CIDRS is required"),
    ({"TINYCONTEXT_TRUSTED_PROXY_CIDRS": "10.0.0.1/8"}, "'10.0.0.1/8' is not a valid CIDR"),
    ({"TINYCONTEXT_TRUSTED_PROXY_CIDRS": "proxy.internal"}, "'proxy.internal' is not a valid"),
    ({"TINYCONTEXT_TRUSTED_PROXY_CIDRS": "10.0.0.0/33"}, "'10.0.0.0/33' is not a valid CIDR"),
    ({"TINYCONTEXT_TRUSTED_PROXY_CIDRS": "0.0.0.0/0"}, "trusts every address"),
    ({"TINYCONTEXT_TRUSTED_PROXY_CIDRS": "::/0"}, "trusts every address"),
    ({"TINYCONTEXT_TENANT_STORE_DIR": ""}, "TINYCONTEXT_TENANT_STORE_DIR is required"),
    ({"TINYCONTEXT_TENANCY": "header"}, "TINYCONTEXT_TENANCY must be off or proxy-header"),
    ({"TINYCONTEXT_MAX_OPEN_STORES": "0"}, "TINYCONTEXT_MAX_OPEN_STORES must be a whole number"),
    ({"TINYCONTEXT_MAX_OPEN_STORES": "many"}, "TINYCONTEXT_MAX_OPEN_STORES must be a whole"),
    ({"TINYCONTEXT_USER_HEADER": "Authorization"}, "is not a usable header name"),
    ({"TINYCONTEXT_USER_HEADER": "X User"}, "is not a usable header name"),
    ({"TINYCONTEXT_MANAGEMENT": "maybe"}, "TINYCONTEXT_MANAGEMENT must be on or off"),
    ({"TINYCONTEXT_MANAGEMENT_TOKEN": "short"}, "TINYCONTEXT_MANAGEMENT_TOKEN is 5 characters"),
    ({"TINYCONTEXT_MANAGEMENT_TOKEN": TOKEN}, "MANAGEMENT_TOKEN must differ from the proxy"),
])
def test_each_weak_or_missing_setting_is_refused(store_dir: Path, change: dict[str, str],
                                                 needle: str) -> None:
    message = _refusal({**hosted_env(store_dir), **change})
    assert needle in message, message
    assert SECRET not in message and TOKEN not in message


def test_store_dir_must_exist_and_be_a_folder(tmp_path: Path) -> None:
    missing = _refusal(hosted_env(tmp_path / "nowhere"))
    assert "does not exist or is not a folder" in missing
    a_file = tmp_path / "file"
    a_file.write_text("x")
    assert "is not a folder" in _refusal(hosted_env(a_file))
    assert not (tmp_path / "nowhere").exists()


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root can write anywhere")
def test_store_dir_must_be_writable(tmp_path: Path) -> None:
    folder = tmp_path / "readonly"
    folder.mkdir(mode=0o500)
    assert "is not writable" in _refusal(hosted_env(folder))


def test_every_problem_is_listed_at_once() -> None:
    message = _refusal({"TINYCONTEXT_TENANCY": "proxy-header",
                        "TINYCONTEXT_TENANT_SECRET": "short"})
    for name in ("TENANT_SECRET is 5 bytes", "TENANT_STORE_DIR", "TRUSTED_PROXY_CIDRS",
                 "TRUSTED_PROXY_TOKEN"):
        assert name in message


PG_URL = "postgresql://tinycontext_app:pw@db.internal/tinycontext"


def test_postgresql_hosted_mode_needs_no_store_dir() -> None:
    for settings in (load_server_settings(hosted_env(None), store_url=PG_URL),
                     load_server_settings({**hosted_env(None),
                                           "TINYCONTEXT_STORE_URL": PG_URL})):
        assert settings.tenancy and settings.postgres and settings.store_dir is None
    # Without a URL the store folder is still required: SQLite hosted mode is unchanged.
    assert "TENANT_STORE_DIR is required" in _refusal(hosted_env(None))
    with pytest.raises(HostedConfigError, match="TENANT_STORE_DIR is required"):
        # The config's URL (here empty: SQLite) is what counts, not the variable.
        load_server_settings({**hosted_env(None), "TINYCONTEXT_STORE_URL": PG_URL},
                             store_url="")


def test_postgresql_hosted_mode_still_refuses_every_other_gap() -> None:
    message = _refusal({"TINYCONTEXT_TENANCY": "proxy-header",
                        "TINYCONTEXT_TENANT_SECRET": "short",
                        "TINYCONTEXT_STORE_URL": PG_URL})
    for name in ("TENANT_SECRET is 5 bytes", "TRUSTED_PROXY_CIDRS", "TRUSTED_PROXY_TOKEN"):
        assert name in message
    assert "TENANT_STORE_DIR" not in message and "pw" not in message


def test_serving_refuses_settings_checked_for_the_other_backend(store_dir: Path) -> None:
    from tinycontext.config.engine import TinyContextConfig
    from tinycontext.entry.container import process_parts
    from tinycontext.hosted.serving import open_serving

    sqlite_checked = load_server_settings(hosted_env(store_dir))
    with pytest.raises(HostedConfigError, match="validated for SQLite but the store is "
                                                "PostgreSQL"):
        config = TinyContextConfig(store_url=PG_URL)
        open_serving(config, sqlite_checked, process_parts(config))
    pg_checked = load_server_settings(hosted_env(None), store_url=PG_URL)
    with pytest.raises(HostedConfigError, match="validated for PostgreSQL"):
        config = TinyContextConfig(memory_db_path=str(store_dir / "x.db"))
        open_serving(config, pg_checked, process_parts(config))


def test_management_over_http_needs_a_token_outside_hosted_mode(store_dir: Path) -> None:
    message = _refusal({"TINYCONTEXT_MANAGEMENT": "on"})
    assert "TINYCONTEXT_MANAGEMENT_TOKEN" in message and "Bearer" in message
    assert load_server_settings({"TINYCONTEXT_MANAGEMENT": "on"}, transport="stdio").management
    with_token = load_server_settings({"TINYCONTEXT_MANAGEMENT": "on",
                                       "TINYCONTEXT_MANAGEMENT_TOKEN": OPERATOR})
    assert with_token.management and with_token.management_token == OPERATOR
    hosted = load_server_settings({**hosted_env(store_dir), "TINYCONTEXT_MANAGEMENT": "on"})
    assert hosted.management and hosted.management_token is None  # the proxy proves callers


def test_stdio_refuses_hosted_mode(store_dir: Path) -> None:
    assert "refused on stdio" in _refusal(hosted_env(store_dir), transport="stdio")


def test_off_by_default() -> None:
    settings = load_server_settings({})
    assert not settings.tenancy and not settings.management


TRUST = ProxyTrust((ipaddress.ip_network("10.1.0.0/16"), ipaddress.ip_network("::1/128")),
                   b"p" * 32)


def _scope(peer: str, *headers: tuple[bytes, bytes]) -> dict[str, object]:
    return {"type": "http", "client": (peer, 5000), "headers": list(headers)}


@pytest.mark.parametrize("peer,ok", [("10.1.2.3", True), ("::ffff:10.1.2.3", True),
                                     ("::1", True), ("10.2.0.1", False), ("fe80::1%eth0", False),
                                     ("not-an-ip", False)])
def test_peer_networks(peer: str, ok: bool) -> None:
    scope = _scope(peer, (b"x-tinycontext-proxy-token", b"p" * 32),
                   (b"x-tinycontext-user-id", b"u1"))
    if ok:
        assert TRUST.verify(scope) == "u1"
    else:
        with pytest.raises(Refused):
            TRUST.verify(scope)


def test_user_id_rules() -> None:
    assert check_user_id("jos\u00e9@example.com".encode()) == "jos\u00e9@example.com"
    assert check_user_id(b"a" * 256) == "a" * 256
    for bad in (b"", b"a" * 257, b"a\x00b", b"a\tb", b"a,b", b"\xc3", b" a"):
        with pytest.raises(Refused):
            check_user_id(bad)


def test_management_token_is_checked_in_constant_time_and_exactly() -> None:
    access = Access(management_token=OPERATOR)
    auth = b"authorization"
    assert access.is_operator(_scope("1.2.3.4", (auth, f"Bearer {OPERATOR}".encode())))
    assert access.is_operator(_scope("1.2.3.4", (auth, f"bearer {OPERATOR}".encode())))
    for value in (OPERATOR, f"Basic {OPERATOR}", f"Bearer {OPERATOR}x", "Bearer "):
        assert not access.is_operator(_scope("1.2.3.4", (auth, value.encode())))
    two = _scope("1.2.3.4", (auth, f"Bearer {OPERATOR}".encode()),
                 (auth, f"Bearer {OPERATOR}".encode()))
    assert not access.is_operator(two)
    assert not Access().is_operator(_scope("1.2.3.4", (auth, f"Bearer {OPERATOR}".encode())))
    caller = Access(TRUST).caller(_scope("10.1.0.9", (b"x-tinycontext-proxy-token", b"p" * 32),
                                         (b"x-tinycontext-user-id", b"secret-user")))
    assert "secret-user" not in repr(caller)
