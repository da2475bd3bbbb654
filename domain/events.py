"""Questions about two events in time: which came first, or how long passed between them.

"Which came first, the move or the new job?", "Did I buy the bike before or after the
marathon?", "How many days passed between the day I X and the day I Y?", "How long after
the wedding did they move?", "How many weeks had passed since I X when I Y?". The answer
needs both events, which are often told in different conversations on different days and
share few words with each other; the question's own best matches tend to be near
neighbours of one of them. `event_pair` recognises such a question from a few general
English forms and splits it into the two events' texts, so recall can look for each
(app/event_pairs.py). Anything else, including a question about one event ("What did she do
after the race?", "How long has she been painting?") or one subject joined by "and"
("Mel and her kids"), gives None and recall is left as it is.

The forms (case-insensitive, the question mark and surrounding space ignored):
- "which/what/who ... first|earlier|sooner, X or Y" and "X or Y: which ... first"
- "did/was/... X or Y (come/happen) first|earlier"
- "... X before or after Y" (and "after or before")
- "how many <days|weeks|months|years|hours|minutes> / how long / how much time ... between
  X and Y" or "... from X to|until Y"
- "how long / how many <unit> / how much time after|before X did|was|... Y"
- "how long / how many <unit> / how much time ... since X when Y"
- "how long did|was|... X before|until|after Y" ("How long did they date before marrying")
- "did/was/... X earlier|later|sooner than Y"
- "did/was/... X before|after Y" (a yes-or-no question about the order of two events)

Each event must keep at least one word that is not a stopword, and the two must differ.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from .text import STOPWORDS

# The cheap test every recall runs: a question without one of these words is never split.
_CUE = re.compile(r"\b(?:first|earlier|sooner|later|before|after|between|since|from)\b", re.I)

_AUX = r"(?:did|do|does|was|were|is|are|had|has|have|will|would)"
_SPAN = (r"how\s+(?:long|much\s+time|many\s+(?:days|weeks|months|years|hours|minutes|"
         r"nights|weekends))")
_ORDER_WORD = r"(?:first|earlier|sooner)"
_HAPPEN = r"(?:come|came|happen|happened|occur|occurred|take|took|place|event|thing)"

_FORMS = [
    # "Which came first, X or Y" / "Which event did I attend first: X or Y"
    re.compile(rf"^(?:which|what|who)\b(?P<frame>[^,:;]*?)\b{_ORDER_WORD}\b\s*[,:;-]?\s*"
               r"(?P<x>.+?),?\s+or\s+(?P<y>.+)$", re.I),
    # "X or Y: which came first"
    re.compile(rf"^(?P<x>.+?),?\s+or\s+(?P<y>.+?)\s*[,:;-]\s*(?:which|what|who)\b.*"
               rf"\b{_ORDER_WORD}$", re.I),
    # "Did I X or Y first" / "Did the wedding or the move come first"
    re.compile(rf"^{_AUX}\s+(?P<x>.+?),?\s+or\s+(?P<y>.+?)\s+(?:(?:come|came|happen|"
               rf"happened|occur|occurred|take\s+place)\s+)?{_ORDER_WORD}$", re.I),
    # "Did I X before or after Y"
    re.compile(r"^(?P<x>.+?)\s+(?:before\s+or\s+after|after\s+or\s+before)\s+(?P<y>.+)$",
               re.I),
    # "How many days passed between X and Y"
    re.compile(rf"^{_SPAN}\b.*?\bbetween\s+(?P<both>.+)$", re.I),
    # "How many days from X to Y"
    re.compile(rf"^{_SPAN}\b.*?\bfrom\s+(?P<x>.+?)\s+(?:to|until|till)\s+(?P<y>.+)$", re.I),
    # "How long after X did Y"
    re.compile(rf"^{_SPAN}\s+(?:after|before)\s+(?P<x>.+?)\s+{_AUX}\s+(?P<y>.+)$", re.I),
    # "How many weeks had passed since X when Y"
    re.compile(rf"^{_SPAN}\b.*?\bsince\s+(?P<x>.+?)\s+when\s+(?P<y>.+)$", re.I),
    # "How long did they date before moving in together"
    re.compile(rf"^how\s+long\s+{_AUX}\s+(?P<x>.+?)\s+(?:before|until|till|after)\s+(?P<y>.+)$",
               re.I),
    # "Was X earlier than Y"
    re.compile(rf"^{_AUX}\s+(?P<x>.+?)\s+(?:earlier|later|sooner)\s+than\s+(?P<y>.+)$", re.I),
    # "Did I X before Y"
    re.compile(rf"^{_AUX}\s+(?P<x>.+?)\s+(?:before|after)\s+(?P<y>.+)$", re.I),
]
# Words that frame an event rather than say what it was.
_LEAD = re.compile(
    rf"^(?:(?:{_AUX}|the\s+(?:day|date|time|moment|week|month|year)(?:\s+(?:that|when))?|"
    r"when|that)\s+)+", re.I)
_TAIL = re.compile(r"(?:\s+(?:come|came|happen|happened|occur|occurred|take\s+place|took\s+"
                   r"place|passed|elapsed|for))+$", re.I)
_WORD = re.compile(r"[^\W_]+")
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class EventPair:
    """The two events a question asks about, in the order it names them."""

    first: str
    second: str


def _clean(text: str) -> str:
    text = text.strip(" \t,;:-\"'")
    text = _TAIL.sub("", _LEAD.sub("", text)).strip(" \t,;:-\"'")
    return " ".join(text.split())


def _framing(words: str) -> str:
    """What a "which ... first" question says the events were ("pet did Jolene adopt" ->
    "pet Jolene adopt"), or "" when it says nothing ("came", "did I do")."""
    kept = [w for w in words.split() if not re.fullmatch(rf"{_AUX}|{_HAPPEN}", w, re.I)]
    frame = " ".join(kept)
    return frame if _telling(frame) else ""


def _telling(text: str) -> bool:
    """At least one word that says something (not a stopword)."""
    return any(w.lower() not in STOPWORDS for w in _WORD.findall(text))


def _split_and(both: str) -> tuple[str, str] | None:
    """'X and Y' at the "and" that repeats X's opening ("the day I ... and the day I ..."),
    else at the first one: "between the day Mel and I met and the day we moved" splits
    between the two days."""
    parts = re.split(r"\s+and\s+", both)
    if len(parts) < 2:
        return None
    opening = " ".join(parts[0].lower().split()[:2])
    for i in range(1, len(parts)):
        if opening and " ".join(parts[i].lower().split()[:2]) == opening:
            return " and ".join(parts[:i]), " and ".join(parts[i:])
    return parts[0], " and ".join(parts[1:])


def _gapped(x: str, y: str) -> tuple[str, str]:
    """'Maria adopting Coco and Shadow': a one- or two-word second event borrows the first's
    opening ("Maria adopting Shadow")."""
    first, second = x.split(), y.split()
    if len(second) <= 2 and len(first) >= len(second) + 2:
        return x, " ".join(first[: len(first) - len(second)] + second)
    return x, y


def event_pair(question: str) -> EventPair | None:
    """The two events of a question about their order or the time between them, or None."""
    if not _CUE.search(question):
        return None
    text = " ".join(question.split()).rstrip(" ?.!")
    for form in _FORMS:
        match = form.match(text)
        if match is None:
            continue
        if "both" in form.groupindex:
            split = _split_and(match["both"])
            if split is None:
                continue
            x, y = _gapped(*split)
        else:
            x, y = match["x"], match["y"]
        x, y = _clean(x), _clean(y)
        frame = _framing(match["frame"]) if "frame" in form.groupindex else ""
        if frame:  # "Which pet did Jolene adopt first, Susie or Seraphim"
            x, y = f"{frame} {x}", f"{frame} {y}"
        if _telling(x) and _telling(y) and x.lower() != y.lower():
            return EventPair(x, y)
    return None


def missing_events(
    top: Sequence[T], first: Sequence[T], second: Sequence[T], apart: Callable[[T, T], bool],
) -> list[T]:
    """The memories to add so that `top` (the results so far) holds both events, from each
    event's candidates (best first): the first event's best, and the second event's best
    that `apart` says is from another moment than it, else its best that is another memory;
    those of the two that `top` lacks. The two events of such a question were usually told
    at different times, and a near neighbour of the first is what the question's own
    ranking already offers."""
    if not first:
        pair = list(second[:1])
    else:
        others = [m for m in second if m != first[0]]
        pair = [first[0], *([next((m for m in others if apart(first[0], m)), others[0])]
                            if others else [])]
    shown = set(top)
    return [m for m in pair if m not in shown]


def with_pair(ranked: Sequence[T], pair: Sequence[T], limit: int) -> list[T]:
    """`ranked` cut to `limit`, with the pair's memories right after the best result (in
    their own order) unless one of them is that result; everything else keeps its order."""
    head = list(ranked[:1])
    placed = head + [p for p in pair if p not in head]
    return (placed + [r for r in ranked[1:] if r not in placed])[:limit]
