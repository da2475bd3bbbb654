"""Which Host names the HTTP servers accept (DNS-rebinding protection), for the MCP HTTP server
and the REST API alike: each transport enforces the list in its own way (the MCP SDK's transport
security settings, REST's request guard).

A web page can make a browser send requests to 127.0.0.1 under a hostname the attacker
controls; the Host header then names that hostname. Servers therefore accept only the
loopback names, the address they are bound to, and whatever `TINYCONTEXT_ALLOWED_HOSTS`
(comma-separated host names, optionally with `:port`; `*` turns the check off) adds.
"""

from __future__ import annotations

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


def _host_name(value: str) -> str:
    """The name part of a Host header: `[::1]:8000` -> `[::1]`, `a.example:80` -> `a.example`."""
    if value.startswith("["):
        return value[: value.find("]") + 1]
    return value.split(":", 1)[0] if value.count(":") == 1 else value


def host_allowed(header: str | None, hosts: list[str]) -> bool:
    """Whether a Host header value names one of `hosts` (a bare name allows any port)."""
    if not header:
        return False
    value = header.strip().lower()
    return value in hosts or _host_name(value) in hosts
