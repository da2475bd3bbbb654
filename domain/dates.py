"""Date cues for recall: the period a question names ("in May 2023", "last March", "two
weeks ago") and the dates a memory mentions or was saved on.

A question naming a period gives a small boost to the candidates dated inside it (see
domain/recall.py, DATE_CUE_WEIGHT); it never filters, so a memory about that time whose
text carries no date still competes on its words and meaning. English date forms only,
written the common ways: "8 May 2023", "May 8, 2023", "May 2023", "2023-05-08", "in 2023".
A month name alone ("in May") is left out: "may" is also a verb, and which year it means is
a guess.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from functools import lru_cache

MONTHS = {
    name: number
    for number, names in enumerate(
        (("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
         ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
         ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
         ("december", "dec")),
        start=1,
    )
    for name in names
}
_MONTH = "(" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_YEAR = r"((?:19|20)\d\d)"
# Every absolute form ends in a year or starts with one: find the years, then read the few
# characters before each for a month and day, which is far cheaper than scanning every
# position of every candidate's text for a month name first.
_YEAR_ALONE = re.compile(rf"\b{_YEAR}\b")
_ISO_DAY = re.compile(r"((?:19|20)\d\d)-(\d\d)-(\d\d)\b")
# The words just before a year, read right to left: "8 May,", "May 8,", "16th of March".
_WORD = re.compile(r"[A-Za-z]+|\d{1,2}(?:st|nd|rd|th)?\b|\S")
_LOOK_BACK = 32
_LAST_MONTH_NAME = re.compile(rf"\blast\s+{_MONTH}(?!\s+\d)", re.I)
_AGO = re.compile(r"\b(\d+|a|an|one|two|three|four|five|six)\s+(day|week|month|year)s?\s+ago\b",
                  re.I)
_NAMED = re.compile(r"\b(yesterday|today|last\s+week|last\s+month|last\s+year|this\s+year)\b",
                    re.I)
_COUNTS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
# Cheap test before the patterns: most memories and questions carry no date at all.
_MAYBE_DATE = re.compile(r"\d|ago\b|yesterday|today|last\s|this\s+year", re.I)


@dataclass(frozen=True, slots=True)
class Period:
    """Days from `start` to `end`, both included."""

    start: date
    end: date

    def holds(self, other: Period) -> bool:
        return self.start <= other.start and other.end <= self.end


def _day(year: int, month: int, day: int) -> Period | None:
    try:
        d = date(year, month, day)
    except ValueError:
        return None
    return Period(d, d)


def _month(year: int, month: int) -> Period:
    first = date(year, month, 1)
    following = date(year + month // 12, month % 12 + 1, 1)
    return Period(first, following - timedelta(days=1))


def _year(year: int) -> Period:
    return Period(date(year, 1, 1), date(year, 12, 31))


def _months_back(today: date, count: int) -> Period:
    index = today.year * 12 + today.month - 1 - count
    return _month(index // 12, index % 12 + 1)


def _month_and_day_before(window: str) -> tuple[int | None, int | None]:
    """(month, day or None) written right before a year, or (None, None)."""
    words = [w.lower() for w in _WORD.findall(window) if w not in ",."]
    if words and words[-1] == "of":
        words.pop()
    if words and words[-1] in MONTHS:  # "8 May", "16th of March", "May"
        month = MONTHS[words[-1]]
        rest = words[:-1]
        if rest and rest[-1] == "of":
            rest.pop()
        return month, _day_number(rest[-1]) if rest else None
    if len(words) >= 2 and words[-2] in MONTHS:  # "May 8"
        number = _day_number(words[-1])
        if number is not None:
            return MONTHS[words[-2]], number
    return None, None


def _day_number(word: str) -> int | None:
    digits = word.rstrip("stndrh")
    return int(digits) if digits.isdigit() and 1 <= int(digits) <= 31 else None


def mentioned(text: str) -> list[Period]:
    """Every absolute date the text names: days, months of a year, years."""
    if "19" not in text and "20" not in text:  # no year, no absolute date (fast path)
        return []
    found: list[Period] = []
    for m in _YEAR_ALONE.finditer(text):
        year, start = int(m[1]), m.start()
        iso = _ISO_DAY.match(text, start)
        if iso:
            day = _day(year, int(iso[2]), int(iso[3]))
            if day is not None:
                found.append(day)
                continue
        month, number = _month_and_day_before(text[max(0, start - _LOOK_BACK):start])
        if month is None:
            found.append(_year(year))
            continue
        day = _day(year, month, number) if number else None
        found.append(day or _month(year, month))
    return found


def asked_period(question: str, today: date) -> Period | None:
    """The one period a question names, or None (no date, or several different ones)."""
    if not _MAYBE_DATE.search(question):
        return None
    periods = set(mentioned(question))
    for m in _LAST_MONTH_NAME.finditer(question):
        month = MONTHS[m[1].lower()]
        periods.add(_month(today.year - (month >= today.month), month))
    for m in _AGO.finditer(question):
        count = int(m[1]) if m[1].isdigit() else _COUNTS[m[1].lower()]
        unit = m[2].lower()
        if unit == "day":
            day = today - timedelta(days=count)
            periods.add(Period(day - timedelta(days=1), day + timedelta(days=1)))
        elif unit == "week":
            middle = today - timedelta(days=7 * count)
            periods.add(Period(middle - timedelta(days=3), middle + timedelta(days=3)))
        elif unit == "month":
            periods.add(_months_back(today, count))
        else:
            periods.add(_year(today.year - count))
    for m in _NAMED.finditer(question):
        word = " ".join(m[1].lower().split())
        if word == "yesterday":
            yesterday = today - timedelta(days=1)
            periods.add(Period(yesterday, yesterday))
        elif word == "today":
            periods.add(Period(today, today))
        elif word == "last week":
            monday = today - timedelta(days=today.weekday() + 7)
            periods.add(Period(monday, monday + timedelta(days=6)))
        elif word == "last month":
            periods.add(_months_back(today, 1))
        elif word == "last year":
            periods.add(_year(today.year - 1))
        else:
            periods.add(_year(today.year))
    # Only the widest of nested periods counts ("May 2023" inside "2023" is the same ask).
    widest = [p for p in periods if not any(q != p and q.holds(p) for q in periods)]
    return widest[0] if len(widest) == 1 else None


def dated_within(period: Period, content: str, created_on: date | None) -> bool:
    """True when the memory was saved inside the period or names a date inside it."""
    if created_on is not None and period.start <= created_on <= period.end:
        return True
    return any(period.holds(p) for p in _mentioned_once(content))


@lru_cache(maxsize=8192)
def _mentioned_once(content: str) -> tuple[Period, ...]:
    # Recall reads the dates of up to a thousand candidates per dated question; the same
    # memories come back for the next question about the same things.
    return tuple(mentioned(content))


def _on(timestamp: str) -> date | None:
    try:
        return date.fromisoformat(timestamp[:10])
    except ValueError:
        return None


def dated_ids(
    question: str, now: str, memories: Iterable[tuple[str, str, str]],
) -> frozenset[str]:
    """Ids of the (id, content, created_at) memories dated inside the period the question
    names, relative to `now` (ISO 8601); empty when it names none."""
    today = _on(now)
    period = asked_period(question, today) if today is not None else None
    if period is None:
        return frozenset()
    return frozenset(
        mid for mid, content, created_at in memories
        if dated_within(period, content, _on(created_at))
    )
