"""One rule of the secret detector (domain/secrets.py): a pattern and how to judge a match."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

# Returns the placeholder type for a match, or None to leave it as it is.
Judge = Callable[[re.Match[str]], str | None]


@dataclass(frozen=True, slots=True)
class Rule:
    """Its pattern, the literal strings one of which must occur for it to run (looked for in
    the lower-cased text when `folded`), a judge and which group to replace (0: the whole
    match). Rules whose every match holds a long run of token characters are skipped at once
    for text without one: most prose."""

    pattern: re.Pattern[str]
    needles: tuple[str, ...]
    judge: Judge
    group: int | str = 0
    folded: bool = False
    long: bool = True  # matches hold a run of 16+ token characters (see secrets._LONG_RUN)
    trim: str = ""  # closing punctuation left out of the replaced part
    gate: re.Pattern[str] | None = None  # after the needles: a search that must find something
