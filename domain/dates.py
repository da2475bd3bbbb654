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
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_DAY_MONTH_YEAR = re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.I)
_MONTH_DAY_YEAR = re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.I)
_MONTH_YEAR = re.compile(rf"\b{_MONTH},?\s+(?:of\s+)?{_YEAR}\b", re.I)
_ISO_DAY = re.compile(r"\b((?:19|20)\d\d)-(\d\d)-(\d\d)\b")
_YEAR_ALONE = re.compile(rf"\b{_YEAR}\b")
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


def mentioned(text: str) -> list[Period]:
    """Every absolute date the text names: days, months of a year, years."""
    if not _MAYBE_DATE.search(text):
        return []
    found: list[Period] = []
    taken: list[tuple[int, int]] = []

    def add(period: Period | None, span: tuple[int, int]) -> None:
        if period is not None and not any(a <= span[0] < b for a, b in taken):
            found.append(period)
            taken.append(span)

    for m in _ISO_DAY.finditer(text):
        add(_day(int(m[1]), int(m[2]), int(m[3])), m.span())
    for m in _DAY_MONTH_YEAR.finditer(text):
        add(_day(int(m[3]), MONTHS[m[2].lower()], int(m[1])), m.span())
    for m in _MONTH_DAY_YEAR.finditer(text):
        add(_day(int(m[3]), MONTHS[m[1].lower()], int(m[2])), m.span())
    for m in _MONTH_YEAR.finditer(text):
        add(_month(int(m[2]), MONTHS[m[1].lower()]), m.span())
    for m in _YEAR_ALONE.finditer(text):
        add(_year(int(m[1])), m.span())
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
    return any(period.holds(p) for p in mentioned(content))


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
