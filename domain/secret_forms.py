"""Secrets named by where they stand rather than by their own shape: an Azure connection
string's key, a password in a URL's query, and "the PIN for the garage is 4821" in prose."""

from __future__ import annotations

import re

from .secret_rule import Rule
from .secret_values import is_placeholder, value_is_secret

_TRIM = ".,:)]}>"  # a sentence's closing punctuation, as secrets._TRIM


def _azure(match: re.Match[str]) -> str | None:
    return None if is_placeholder(match.group("value")) else "azure-storage-key"


_QUERY_KINDS = {"pass": "password", "password": "password", "passwd": "password",
                "pwd": "password", "passcode": "password", "token": "token",
                "access_token": "token", "auth_token": "token", "secret": "secret",
                "client_secret": "secret", "api_key": "api-key", "apikey": "api-key"}


def _query(match: re.Match[str]) -> str | None:
    value = match.group("value")
    if is_placeholder(value) or value.startswith("[redacted:"):
        return None
    return _QUERY_KINDS[match.group("key").lower()]


def _prose(match: re.Match[str]) -> str | None:
    """A PIN is 4-8 digits; a password or passcode reads like one (digits, symbols, case)."""
    key, value = match.group("key").lower(), match.group("value").rstrip(_TRIM)
    if value.startswith("[redacted:"):
        return None
    if key.startswith("pin"):
        return "pin" if value.isdigit() and 4 <= len(value) <= 8 else None
    if value.isdigit():
        return "password" if len(value) >= 4 else None
    return "password" if value_is_secret("password", value, strict=False) else None


# Before the key = value rule, which would take a whole query string for the value.
BEFORE_ASSIGNMENTS = (
    Rule(  # Azure storage / Service Bus connection strings: AccountKey=<base64>;
        re.compile(r"(?i)(?<![A-Za-z0-9])(?:Account|SharedAccess)Key\s*=\s*"
                   r"(?P<value>[A-Za-z0-9+/]{20,}={0,2})(?![A-Za-z0-9+/=])"),
        ("accountkey", "sharedaccesskey"), _azure, "value", folded=True, long=False,
    ),
    Rule(  # https://host/path?user=bob&password=hunter2#top: only the value goes
        re.compile(r"(?i)[?&;](?P<key>" + "|".join(_QUERY_KINDS) + r")="
                   r"(?P<value>[^&#\s\"'<>]+)"),
        ("=",), _query, "value", folded=True, long=False, trim=_TRIM,
    ),
)
PROSE = (
    Rule(  # "the pw for the router is Tr0ub4dor", "PIN for the garage: 4821", "passcode: 7391"
        re.compile(
            r"(?i)\b(?P<key>pw|pwd|passcode|passphrase|password|pin(?: code| number)?)"
            r"(?:\s+(?:for|to|of|on|at)\s+[^\n.,;:!?=]{1,40}?)?"
            r"(?:\s+(?:is|was)\s+|\s*[:=]\s*)(?P<open>[\"'`]?)(?P<value>[^\s\"'`]{1,100})"
        ),
        ("pw", "pin", "pass"), _prose, "value", folded=True,
        long=False, trim=_TRIM, gate=re.compile(r"(?<![a-z])(?:pwd?|pin|pass(?:code|phrase|word))"
                                                r"(?![a-z])"),
    ),
)
