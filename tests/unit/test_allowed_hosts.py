"""The Host header is parsed strictly: a name (or [IPv6 literal]) and an optional numeric port,
nothing else, before it is compared with the allow-list."""

from __future__ import annotations

import pytest

from tinycontext.config.allowed_hosts import allowed_hosts, host_allowed

HOSTS = allowed_hosts("127.0.0.1", extra="memory.internal,api.example:8443")


@pytest.mark.parametrize("header", [
    "127.0.0.1", "127.0.0.1:8765", "LOCALHOST:8000", "[::1]", "[::1]:8000", "memory.internal",
    "memory.internal:443", "api.example:8443", " localhost ",
])
def test_allowed_names_with_or_without_a_port(header: str) -> None:
    assert host_allowed(header, HOSTS)


@pytest.mark.parametrize("header", [
    "127.0.0.1:8765@evil.example",  # userinfo-like tails: the name is not 127.0.0.1
    "localhost:8000@evil.example:80",
    "127.0.0.1:8765/evil.example",
    "127.0.0.1:80:80",
    "127.0.0.1:",
    "127.0.0.1:port",
    "127.0.0.1:99999",
    "[::1]evil.example",
    "[::1]:80@evil.example",
    "[::1",
    "evil.example@127.0.0.1",
    "127.0.0.1 evil.example",
    "api.example:9000",  # a name allowed with one port only
    "evil.example", "", None,
])
def test_anything_else_is_refused(header: str | None) -> None:
    assert not host_allowed(header, HOSTS)
