"""Which Host names the HTTP servers accept (DNS-rebinding protection), for the MCP HTTP server
and the REST API alike: each transport enforces the list in its own way (the MCP SDK's transport
security settings, REST's request guard).

A web page can make a browser send requests to 127.0.0.1 under a hostname the attacker
controls; the Host header then names that hostname. Servers therefore accept only the
loopback names, the address they are bound to, and whatever `TINYCONTEXT_ALLOWED_HOSTS`
(comma-separated host names, optionally with `:port`; `*` turns the check off) adds.
"""

from __future__ import annotations

import re

LOOPBACK = ("127.0.0.1", "localhost", "[::1]")
WILDCARD_BINDS = ("", "0.0.0.0", "::", "[::]")
ENV_NAME = "TINYCONTEXT_ALLOWED_HOSTS"


def allowed_hosts(bind_host: str | None = None, extra: str | None = None) -> list[str] | None:
    """Accepted Host names (`name` or `name:port`), or None when the check is switched off.
    `extra`: TINYCONTEXT_ALLOWED_HOSTS as the bootstrap read it (None: read it now)."""
    if extra is None:
        from tinycontext.config.settings import server_variables

        extra = server_variables().allowed_hosts
    names = [item.strip().lower() for item in extra.split(",") if item.strip()]
    if "*" in names:
        return None
    hosts = list(LOOPBACK)
    if bind_host and bind_host not in WILDCARD_BINDS:
        ipv6 = ":" in bind_host and not bind_host.startswith("[")
        hosts.append((f"[{bind_host}]" if ipv6 else bind_host).lower())
    for name in names:
        if name not in hosts:
            hosts.append(name)
    return hosts


# A Host header is `host [":" port]` (RFC 9110): a bracketed IPv6 literal or a name of letters,
# digits, dots, hyphens (and `_`, `~`), then digits only. Anything after the name that is not
# such a port (`127.0.0.1:8765@evil.example`) makes the header foreign, never "127.0.0.1".
_HOST_HEADER = re.compile(r"(\[[0-9a-f:.]+\]|[a-z0-9._~-]+)(?::([0-9]{1,5}))?")


def _parse_host(value: str) -> tuple[str, str | None] | None:
    """(name, port or None) of a Host header value, or None when it is not one."""
    match = _HOST_HEADER.fullmatch(value)
    if match is None or (match.group(2) is not None and int(match.group(2)) > 65535):
        return None
    return match.group(1), match.group(2)


def host_allowed(header: str | None, hosts: list[str]) -> bool:
    """Whether a Host header value names one of `hosts` (a bare name allows any port)."""
    parsed = _parse_host(header.strip().lower()) if header else None
    if parsed is None:
        return False
    name, port = parsed
    return name in hosts or (port is not None and f"{name}:{port}" in hosts)
