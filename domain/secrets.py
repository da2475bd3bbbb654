"""Secrets are never stored: recognisable credentials become `[redacted:<type>]` placeholders.

Agents paste API keys, tokens, passwords and private keys into what they save. Each rule here
is written from the public shape of one kind of credential: a fixed prefix and alphabet
(provider tokens), a structure that can be checked (JWTs, PEM blocks, URLs with a password),
or a word that names a secret followed by its value (`password=...`, `api key: ...`, `the
token is ...`). A random-looking string on its own is never taken for a secret: hex ids, git
SHAs, sha256 hashes, UUIDs and base64 blobs stay as they are unless a word such as "secret" or
"token" names them.

Every rule only runs when a cheap literal test finds its prefix or keyword in the text, so
ordinary memories pay for a few substring searches. Placeholders are never matched again:
redacting a redacted text changes nothing.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections import Counter
from dataclasses import dataclass
from functools import partial

from . import secret_forms, secret_ids
from .secret_rule import Judge
from .secret_rule import Rule as _Rule
from .secret_values import (
    FAMILY_KIND,
    code_style,
    family_of,
    is_placeholder,
    looks_random,
    value_is_secret,
)

PLACEHOLDER = "[redacted:{}]"


@dataclass(frozen=True, slots=True)
class Redaction:
    """The text with every secret replaced, and the type of each replaced secret in order."""

    text: str
    kinds: tuple[str, ...] = ()

    @property
    def notice(self) -> str | None:
        """What was replaced, for the save/update result: counts and types, never values."""
        if not self.kinds:
            return None
        counts = Counter(self.kinds)
        listed = ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items()))
        many = len(self.kinds) > 1
        return (
            f"{len(self.kinds)} secret{'s' if many else ''} ({listed}) "
            f"{'were' if many else 'was'} replaced by [redacted:<type>] before saving: memories "
            "never hold credentials. Keep secrets in a secret manager and save where they live "
            "instead."
        )


def _always(kind: str) -> Judge:
    return lambda match: kind


def _random_tail(kind: str, start: int, digits: bool = True) -> Judge:
    """The part after the fixed prefix must look generated (not a hyphenated word)."""
    return lambda match: kind if looks_random(match.group(0)[start:], digits) else None


def _jwt(match: re.Match[str]) -> str | None:
    header = match.group(1)
    try:
        decoded = json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)))
    except (binascii.Error, ValueError):
        return None
    return "jwt" if isinstance(decoded, dict) and "alg" in decoded else None


def _url_password(match: re.Match[str]) -> str | None:
    return None if is_placeholder(match.group("value")) else "password"


def _inside_placeholder(text: str, position: int) -> bool:
    """Whether `position` lies inside a placeholder (its type names a secret's kind)."""
    opened = text.rfind("[redacted:", max(0, position - 32), position)
    return opened != -1 and text.find("]", opened, position) == -1


def _assignment(match: re.Match[str]) -> str | None:
    if _inside_placeholder(match.string, match.start("key")):
        return None
    key, separator = match.group("key"), match.group("sep").strip()
    family = family_of(key)
    dashes = bool(match.group("dashes"))
    if family is None or (not separator and not dashes):
        return None  # "password reset": a space separates only a command-line flag's value
    prose = separator.lower() in ("is", "was", "to")
    quoted = match.group("quote") or match.group("open") or ""
    # A flag's value after a space reads like prose ("the --password flag"); `=` is code.
    strict = bool(separator) and not prose and code_style(key, separator, quoted, dashes)
    value = match.group("value")
    if not match.group("open"):
        value = value.rstrip(_TRIM)  # "(password: hunter2)." ends the sentence, not the value
    if not value_is_secret(family, value, strict):
        return None
    if family == "api-key" and len(value) == 40 and _AWS.search(key.replace("_", " ")):
        return "aws-secret-key"
    return FAMILY_KIND[family]


def _near(match: re.Match[str]) -> str | None:
    value = match.group("value")
    if not looks_random(value) or _inside_placeholder(match.string, match.start("key")):
        return None
    family = family_of(match.group("key")) or "secret"
    if len(value) == 40 and _AWS.search(match.string, max(0, match.start() - 60), match.end()):
        return "aws-secret-key"
    return FAMILY_KIND[family]


_END = r"(?![A-Za-z0-9_-])"
_GITLAB = ("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "glft-", "glsoat-", "gloas-", "glimt-",
           "glagent-")
_TRIM = ".,:)]}>"
_LONG_RUN = re.compile(r"[A-Za-z0-9_+/=.~-]{16,}")
_AWS = re.compile(r"(?i)\baws\b|\bamazon\b")
_KEYWORDS = (
    r"password|passwd|passphrase|pass|secret|token|api[_-]?key|apikey|access[_-]?key|"
    r"secret[_-]?key|private[_-]?key|auth[_-]?key|credentials?"
)
_NEAR_KEYWORDS = (
    r"password|passwd|passphrase|secret|token|api[ _-]?key|apikey|access[ _-]?key|"
    r"secret[ _-]?key|private[ _-]?key|credentials?"
)
_KEY_NEEDLES = ("pass", "secret", "token", "key", "credential")
# The keyword rules are slow-ish (case-insensitive, many alternatives): they only run when a
# keyword stands as a word or a name's last part in the lower-cased text ("db_password",
# "api key", not "passion" or "monkey").
_KEYWORD_AT = re.compile(
    r"(?<![a-z0-9])(?:password|passwd|passphrase|pass|secret|token|api[ _-]?key|apikey|"
    r"access[ _-]?key|private[ _-]?key|auth[ _-]?key|credential)s?(?![a-z])"
)

_RULES: tuple[_Rule, ...] = (
    _Rule(  # PEM private keys, whole block; a pasted block cut before its END line too
        re.compile(
            r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
            # the body stops at the next BEGIN: many BEGINs without an END stay linear
            r"(?:(?:(?!-----BEGIN).)*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
            r"|(?:[ \t]*(?:\r?\n|\\n)[ \t]*(?:[A-Za-z0-9+/=]{4,}|[A-Za-z-]+: [^\n\\]*))*)",
            re.DOTALL,
        ),
        ("PRIVATE KEY",), _always("private-key"),
    ),
    _Rule(  # JWT: base64url header.payload.signature, the header a JSON object naming "alg"
        re.compile(r"(?<![A-Za-z0-9_-])(eyJ[A-Za-z0-9_-]{8,})\.eyJ[A-Za-z0-9_-]{4,}\."
                   r"[A-Za-z0-9_-]*" + _END),
        ("eyJ",), _jwt,
    ),
    _Rule(re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
          ("AKIA", "ASIA"), _always("aws-access-key-id")),
    _Rule(re.compile(r"(?<![A-Za-z0-9_-])AIza[A-Za-z0-9_-]{35}" + _END),
          ("AIza",), _always("google-api-key")),
    _Rule(re.compile(r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]"
                     r"{40,})(?![A-Za-z0-9_])"),
          ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), _always("github-token")),
    _Rule(re.compile(r"(?<![A-Za-z0-9_-])(?:" + "|".join(_GITLAB) + r")"
                     r"[A-Za-z0-9_-]{20,}(?:\.[A-Za-z0-9_-]+)*" + _END),
          _GITLAB, _always("gitlab-token")),
    _Rule(re.compile(r"(?<![A-Za-z0-9_-])xox(?:[abposre]|e\.xox[a-z])-[A-Za-z0-9-]{10,}"
                     r"(?![A-Za-z0-9])"),
          ("xox",), _random_tail("slack-token", 5)),
    _Rule(re.compile(r"https://hooks\.slack\.com/(?:services|workflows|triggers)/"
                     r"[A-Za-z0-9/_-]{20,}"),
          ("hooks.slack.com",), _always("slack-webhook")),
    _Rule(re.compile(r"(?<![A-Za-z0-9_])(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|"
                     r"whsec_[A-Za-z0-9+/=]{24,})(?![A-Za-z0-9_])"),
          ("_live_", "_test_", "whsec_"), _always("stripe-key")),
    _Rule(re.compile(r"(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,}" + _END),
          ("sk-ant-",), _always("anthropic-key")),
    _Rule(re.compile(r"(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}" + _END),
          ("sk-",), _random_tail("openai-key", 3)),
    _Rule(re.compile(r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])"),
          ("npm_",), _always("npm-token")),
    _Rule(re.compile(r"(?<![A-Za-z0-9_-])pypi-AgE[A-Za-z0-9_-]{50,}" + _END),
          ("pypi-",), _always("pypi-token")),
    _Rule(re.compile(r"(?<![A-Za-z0-9_])hf_[A-Za-z]{34}(?![A-Za-z0-9_])"),
          ("hf_",), _random_tail("huggingface-token", 3, digits=False)),
    _Rule(  # scheme://user:password@host: only the password goes
        re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]{1,30}://[^\s:/?#@\[\]]*:"
                   r"(?P<value>[^\s/?#@]+)@(?=[A-Za-z0-9\[])"),
        ("://",), _url_password, "value", long=False,
    ),
    _Rule(  # Authorization: Bearer <token>
        re.compile(r"(?i)\bbearer\s+(?P<value>[A-Za-z0-9._~+/-]{16,}=*)(?![A-Za-z0-9._~+/=-])"),
        ("bearer",), lambda m: "bearer-token" if looks_random(m.group("value")) else None,
        "value", True,
    ),
    _Rule(  # Authorization: Basic <base64 of user:password>
        re.compile(r"(?i)\bauthorization[\"']?\s*[:=]\s*[\"']?basic\s+"
                   r"(?P<value>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])"),
        ("basic",), _always("basic-auth"), "value", True, long=False,
    ),
    *secret_forms.BEFORE_ASSIGNMENTS,
    _Rule(  # key = value, key: value, "key": "value", --key value, the password is value
        re.compile(
            r"(?i)(?<![A-Za-z0-9_.${-])(?P<dashes>--)?(?P<key>(?:[A-Za-z0-9]+[_.-])*?"
            r"(?:" + _KEYWORDS + r"))(?P<quote>[\"']?)"
            r"(?P<sep>[ \t]*(?::=|=>|[:=])[ \t]*|[ \t]+(?:(?:is|was|to)[ \t]+)?)"
            r"(?P<open>[\"'`]?)(?P<value>(?!\[redacted:)(?<=[\"'`])[^\"'`\n]{1,200}(?=[\"'`])|"
            # unquoted: up to the next space or quote, less a sentence's closing punctuation
            r"(?!\[redacted:|&)(?<![\"'`])[^\s\"'`,;]{1,200})"
        ),
        _KEY_NEEDLES, _assignment, "value", True, long=False, trim=_TRIM,
    ),
    _Rule(  # a generated-looking value a word or two after a secret's name, in prose
        re.compile(
            # not after "-" or ":", as inside a placeholder: [redacted:aws-secret-key]
            r"(?i)\b(?<![-:])(?P<key>" + _NEAR_KEYWORDS + r")s?\b"
            r"(?:[^\w\n]{1,3}[A-Za-z]{1,12}){0,2}?[^\w\n]{1,3}"
            r"(?P<value>[A-Za-z0-9+/_=.~-]{16,})(?![A-Za-z0-9+/_=.~-])"
        ),
        _KEY_NEEDLES, _near, "value", True,
    ),
    *secret_forms.PROSE,
    *secret_ids.RULES,
)


_SHORT_RULES = tuple(rule for rule in _RULES if not rule.long)


# Invisible characters that can split a pasted token so no rule sees it whole ("ghp_ab<ZWSP>
# cd..."). Only those between two token characters are taken out, and only when that reveals
# a secret: a zero-width joiner inside an emoji or between Indic letters carries meaning.
_INVISIBLE = "\u00ad\u180e\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff"
_ANY_INVISIBLE = re.compile(f"[{_INVISIBLE}]")
_SPLIT = re.compile(
    rf"(?<=[A-Za-z0-9_+/=.~-])[{_INVISIBLE}]+(?=[A-Za-z0-9_+/=.~-])"
)


def redact(text: str) -> Redaction:
    """`text` with every recognised secret replaced by `[redacted:<type>]`."""
    if not text.isascii() and _ANY_INVISIBLE.search(text) is not None:
        joined = _SPLIT.sub("", text)
        found = _redact(joined) if joined != text else None
        if found is not None and found.kinds:
            return found
    return _redact(text)


def _redact(text: str) -> Redaction:
    kinds: list[str] = []
    folded = text.lower()
    keyword: bool | None = None
    for rule in _RULES if _LONG_RUN.search(text) else _SHORT_RULES:
        haystack = folded if rule.folded else text
        for needle in rule.needles:  # a plain loop: this is the hot path of every save
            if needle in haystack:
                break
        else:
            continue
        if rule.gate is not None and rule.gate.search(haystack) is None:
            continue
        if rule.needles is _KEY_NEEDLES:
            if keyword is None:
                keyword = _KEYWORD_AT.search(folded) is not None
            if not keyword:
                continue
        replaced = rule.pattern.sub(partial(_replace, rule, kinds), text)
        if replaced != text:
            text, folded = replaced, replaced.lower()
    return Redaction(text, tuple(kinds))


def _replace(rule: _Rule, kinds: list[str], match: re.Match[str]) -> str:
    kind = rule.judge(match)
    if kind is None:
        return match.group(0)
    start, end = match.span(rule.group)
    if not match.groupdict().get("open"):  # a quoted value is replaced whole
        while end > start and match.string[end - 1] in rule.trim:
            end -= 1
    kinds.append(kind)
    whole = match.group(0)
    offset = match.start()
    return whole[:start - offset] + PLACEHOLDER.format(kind) + whole[end - offset:]
