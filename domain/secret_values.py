"""Judging a value that a word such as "password" or "token" names: is it the secret itself?

`password=hunter2` in code or configuration always is. In prose, "Password: reset it" or
"the token is expired" is not, so there the value must look like a credential: a password
with digits or symbols, a token that looks generated.
"""

from __future__ import annotations

import re

from .entropy import shannon_bits

FAMILY_KIND = {
    "password": "password", "secret": "secret", "token": "token", "api-key": "api-key",
    "private-key": "private-key",
}
# Values that stand for a secret without being one: config words, empty markers, templates.
_STAND_INS = frozenset(
    """none null nil true false yes no on off undefined empty required optional enabled
    disabled default unset hidden redacted masked removed secret password token string str int
    env changeme example xxx""".split()
)
_TEMPLATE = re.compile(
    r"^(?:\*+|x{3,}|X{3,}|\.{3,}|…|<.*|%\(?.*|"
    r"\[redacted:[a-z0-9-]+\])$"
    r"|^\$[{(A-Za-z_]"  # shell and compose variables: $DB_PASSWORD, ${DB_PASSWORD:?set it}
    r"|[()\[\]{}]"  # code reading it from elsewhere: getpass(), os.environ[...], f"{secret}"
    r"|^[A-Z][A-Z_]+$"  # a constant's name: API_KEY, OPERATOR
)
# A name that holds the secret rather than the secret: settings.db_password, proxy_token,
# X-Proxy-Token.
_REFERENCE = re.compile(r"^[A-Za-z_][A-Za-z]*(?:[_.-](?:[A-Za-z]+|[0-9]+))+$")
_NAMED = re.compile(r"(?i)pass|secret|token|key|credential")
_PARTS = re.compile(r"[_.\- ]+")


def is_placeholder(value: str) -> bool:
    """An empty marker, a template or a config word rather than a secret."""
    value = value.strip()
    return (
        not value or value.lower() in _STAND_INS or bool(_TEMPLATE.search(value))
        or (bool(_REFERENCE.match(value)) and bool(_NAMED.search(value)))
    )


def family_of(key: str) -> str | None:
    """Which kind of secret a key names (`db_password` -> password), or None."""
    parts = [p for p in _PARTS.split(key.lower()) if p]
    if not parts:
        return None
    last = parts[-1]
    if last in ("password", "passwd", "passphrase") or (last == "pass" and len(parts) > 1):
        return "password"
    if last in ("secret", "credential", "credentials"):
        return "secret"
    if last == "token":
        return "token"
    if last in ("apikey", "api_key"):
        return "api-key"
    if last == "key" and len(parts) > 1:
        if parts[-2] == "private":
            return "private-key"
        if parts[-2] in ("api", "access", "secret", "auth"):
            return "api-key"
    return None


def code_style(key: str, separator: str, quote: str, dashes: bool) -> bool:
    """Whether `key` and its separator read as code or configuration rather than prose."""
    return (
        dashes or bool(quote) or separator in ("=", ":=", "=>")
        or any(ch in key for ch in "_.-") or (len(key) > 1 and key.isupper())
    )


def _class(ch: str) -> int:
    return 0 if ch.isdigit() else 1 if ch.islower() else 2


def looks_random(word: str, digits: bool = True) -> bool:
    """A string a generator made: long, letters and digits mixed, classes switching often.

    Identifiers, model names, versions and dates keep their words and numbers in runs
    ("claude-3-5-sonnet-20241022", "version2024release"); generated tokens switch between
    digits, lower and upper case at every other character. Without digits a value must be
    20+ characters, unless `digits=False` says the format is letters only.
    """
    if len(word) < 16 or word[0] in "/~." or "//" in word:
        return False
    core = word.strip("=")
    letters = [ch for ch in core if ch.isalpha()]
    if not letters:
        return False
    pairs = switches = 0
    for a, b in zip(core, core[1:], strict=False):
        if a.isalnum() and b.isalnum():
            pairs += 1
            switches += _class(a) != _class(b)
    if not pairs or shannon_bits(core) < 2.5:
        return False
    if any(ch.isdigit() for ch in core):
        return switches / pairs >= 0.25
    # Letters only: mixed case switching often, and few vowels (words are ~40% vowels,
    # random letters ~20%), so CamelCase names stay.
    vowels = sum(ch in "aeiouAEIOU" for ch in letters) / len(letters)
    return (not digits or len(core) >= 20) and switches / pairs >= 0.35 and vowels < 0.3


def _password_like(value: str) -> bool:
    """Prose: a word with digits, symbols or inner capitals, not a plain word."""
    if len(value) < 6:
        return False
    if value.isdigit():
        return True
    return (
        any(ch.isdigit() for ch in value) or any(not ch.isalnum() for ch in value)
        or any(ch.isupper() for ch in value[1:])
    )


def value_is_secret(family: str, value: str, strict: bool) -> bool:
    """Whether `value`, named by a key of `family`, is the secret (see module docstring)."""
    value = value.strip()
    if is_placeholder(value):
        return False
    if family == "password":
        if strict:
            return not value.isdigit() or len(value) >= 4
        return _password_like(value)
    if value.isdigit():
        return False  # counts and ids: "max_token=5", "token: 12"
    if strict:
        return len(value) >= 8 and not (value.isalpha() and value.islower())
    return looks_random(value)
