"""Hosted mode and management settings of a server process (SPEC section 8), validated.

`check_server_settings` checks the TINYCONTEXT_* variables (read by tinycontext.config.settings,
once, at start-up; `load_server_settings` reads them first) and refuses to start, naming
every missing or weak setting at once. tinycontext.hosted.serving (what a server serves) and
tinycontext.hosted.stores (the per-user stores) both use it, so neither imports the other
for it.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from tinycontext.config.engine import ENV_PREFIX, ConfigError
from tinycontext.hosted.checks import ALLOW_BROAD, SECRET_HINT, check_strength, proxy_networks

if TYPE_CHECKING:
    from tinycontext.config.settings import ServerVariables

log = logging.getLogger("tinycontext.hosted")

MIN_SECRET_BYTES = 32
MIN_PROXY_TOKEN_BYTES = 32
MIN_MANAGEMENT_TOKEN_CHARS = 24
DEFAULT_MAX_OPEN_STORES = 64
MAX_OPEN_STORES_LIMIT = 100_000
HEADER_NAME = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$")
RESERVED_HEADERS = frozenset({
    "host", "authorization", "cookie", "content-type", "content-length", "accept",
    "transfer-encoding", "connection", "mcp-session-id", "mcp-protocol-version",
    "x-tinycontext-proxy-token", "x-forwarded-for",
})
SWITCH = {"on": True, "true": True, "1": True, "yes": True,
          "off": False, "false": False, "0": False, "no": False, "": False}


class HostedConfigError(ConfigError):
    """A server setting is missing or weak; the message names each one and the fix."""


@dataclass(frozen=True)
class ServerSettings:
    """Validated hosted-mode and management settings of one server process."""

    tenancy: bool = False
    networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = ()
    tenant_secret: bytes = field(default=b"", repr=False)
    proxy_token: bytes = field(default=b"", repr=False)
    store_dir: Path | None = None  # SQLite hosted mode only
    postgres: bool = False  # hosted mode keeps every user's rows in store_url's database
    user_header: str = "X-TinyContext-User-Id"
    max_open_stores: int = DEFAULT_MAX_OPEN_STORES
    management: bool = False
    management_token: str | None = field(default=None, repr=False)
    # TINYCONTEXT_ALLOWED_HOSTS as given: Host names the HTTP servers accept besides their own.
    allowed_hosts: str = ""


def _get(env: ServerVariables, name: str) -> str:
    value: str = getattr(env, name.lower())
    return value.strip()


def _secret(env: ServerVariables, key: str, minimum: int, what: str,
            problems: list[str]) -> bytes:
    raw = _get(env, key).encode("utf-8")
    name = ENV_PREFIX + key
    if not raw:
        problems.append(f"{name} is required ({what}): at least {minimum} random bytes, "
                        f"{SECRET_HINT}.")
    elif len(raw) < minimum:
        problems.append(f"{name} is {len(raw)} bytes; at least {minimum} are needed "
                        f"({SECRET_HINT}).")
    else:
        check_strength(name, raw.decode("utf-8"), problems)
    return raw


def _store_dir(raw: str, problems: list[str]) -> Path | None:
    name = ENV_PREFIX + "TENANT_STORE_DIR"
    if not raw:
        problems.append(f"{name} is required: an existing folder for the per-user stores.")
        return None
    folder = Path(raw).expanduser()
    if not folder.is_dir():
        problems.append(f"{name}: {folder} does not exist or is not a folder; create it "
                        "(owner-only, mode 700) first.")
        return None
    if not os.access(folder, os.W_OK | os.X_OK):
        problems.append(f"{name}: {folder} is not writable by this user.")
    elif os.name == "posix":
        info = folder.stat()
        if info.st_uid != os.getuid() and info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            problems.append(f"{name}: {folder} belongs to another user and others can open "
                            "it; use a folder this user owns (it is made mode 700).")
    return folder.resolve()


def _switch(env: ServerVariables, key: str, problems: list[str]) -> bool:
    raw = _get(env, key).lower()
    if raw not in SWITCH:
        problems.append(f"{ENV_PREFIX}{key} must be on or off, got {raw!r}.")
        return False
    return SWITCH[raw]


def _max_open(raw: str, problems: list[str]) -> int:
    if not raw:
        return DEFAULT_MAX_OPEN_STORES
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_OPEN_STORES_LIMIT:
        problems.append(f"{ENV_PREFIX}MAX_OPEN_STORES must be a whole number from 1 to "
                        f"{MAX_OPEN_STORES_LIMIT}, got {raw!r}.")
        return DEFAULT_MAX_OPEN_STORES
    return int(raw)


def _user_header(raw: str, problems: list[str]) -> str:
    if not raw:
        return "X-TinyContext-User-Id"
    if not HEADER_NAME.match(raw) or raw.lower() in RESERVED_HEADERS:
        problems.append(f"{ENV_PREFIX}USER_HEADER: {raw!r} is not a usable header name "
                        "(letters, digits and -, not a standard or TinyContext header).")
    return raw


def _refuse(problems: list[str], what: str) -> None:
    if problems:
        lines = "\n".join(f"  - {p}" for p in problems)
        raise HostedConfigError(f"{what} refused to start:\n{lines}")


def load_server_settings(
    environ: Mapping[str, str] | None = None,
    *,
    transport: Literal["stdio", "http"] = "http",
    store_url: str | None = None,
) -> ServerSettings:
    """Read the server variables from `environ` (None: the process environment) and check
    them (`check_server_settings`)."""
    from tinycontext.config.settings import server_variables

    return check_server_settings(server_variables(environ), transport=transport,
                                 store_url=store_url)


def check_server_settings(
    env: ServerVariables,
    *,
    transport: Literal["stdio", "http"] = "http",
    store_url: str | None = None,
) -> ServerSettings:
    """Validate hosted mode and management; HostedConfigError lists every problem.

    `env`: the server variables as read once at start-up (the bootstrap's). `store_url` is
    the engine config's (None: TINYCONTEXT_STORE_URL): with a PostgreSQL URL hosted mode
    keeps every user in that database and needs no TENANT_STORE_DIR.
    """
    problems: list[str] = []
    tenancy_raw = _get(env, "TENANCY").lower()
    if tenancy_raw not in ("", "off", "proxy-header"):
        problems.append(f"{ENV_PREFIX}TENANCY must be off or proxy-header, got {tenancy_raw!r}.")
    tenancy = tenancy_raw == "proxy-header"
    if tenancy and transport == "stdio":
        raise HostedConfigError(
            "hosted mode (TINYCONTEXT_TENANCY) is refused on stdio: a local pipe cannot prove "
            "who is calling. Use `tinycontext serve` behind the authenticating proxy."
        )
    management = _switch(env, "MANAGEMENT", problems)
    token = _get(env, "MANAGEMENT_TOKEN") or None
    if token is not None and len(token) < MIN_MANAGEMENT_TOKEN_CHARS:
        problems.append(f"{ENV_PREFIX}MANAGEMENT_TOKEN is {len(token)} characters; at least "
                        f"{MIN_MANAGEMENT_TOKEN_CHARS} are needed ({SECRET_HINT}).")
    elif token is not None:
        check_strength(ENV_PREFIX + "MANAGEMENT_TOKEN", token, problems)
    if management and transport == "http" and not tenancy and token is None:
        problems.append(f"{ENV_PREFIX}MANAGEMENT=on over HTTP needs a way to authenticate: set "
                        f"{ENV_PREFIX}MANAGEMENT_TOKEN ({MIN_MANAGEMENT_TOKEN_CHARS}+ characters, "
                        "sent as `Authorization: Bearer`), or run hosted mode behind the proxy.")
    allowed = env.allowed_hosts
    settings = ServerSettings(management=management, management_token=token,
                              allowed_hosts=allowed)
    if not tenancy:
        _refuse(problems, "tinycontext")
        return settings
    postgres = bool((_get(env, "STORE_URL") if store_url is None else store_url).strip())
    secret = _secret(env, "TENANT_SECRET", MIN_SECRET_BYTES,
                     "keys each user's rows" if postgres else "names the per-user files",
                     problems)
    proxy_token = _secret(env, "TRUSTED_PROXY_TOKEN", MIN_PROXY_TOKEN_BYTES,
                          "sent by the proxy on every request", problems)
    if secret and secret == proxy_token:
        problems.append(f"{ENV_PREFIX}TRUSTED_PROXY_TOKEN must differ from "
                        f"{ENV_PREFIX}TENANT_SECRET (the token travels with every request).")
    if token is not None and token.encode() == proxy_token:
        problems.append(f"{ENV_PREFIX}MANAGEMENT_TOKEN must differ from the proxy token.")
    settings = ServerSettings(
        tenancy=True,
        networks=proxy_networks(_get(env, "TRUSTED_PROXY_CIDRS"),
                                _switch(env, ALLOW_BROAD, problems), problems),
        tenant_secret=secret, proxy_token=proxy_token,
        # On PostgreSQL no file is written per user: a store folder would go unused.
        store_dir=None if postgres else _store_dir(_get(env, "TENANT_STORE_DIR"), problems),
        postgres=postgres,
        user_header=_user_header(_get(env, "USER_HEADER"), problems),
        max_open_stores=_max_open(_get(env, "MAX_OPEN_STORES"), problems),
        management=management, management_token=token, allowed_hosts=allowed,
    )
    _refuse(problems, "hosted mode (TINYCONTEXT_TENANCY=proxy-header)")
    return settings
