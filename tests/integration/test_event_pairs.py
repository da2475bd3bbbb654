"""The event-pair step on the real model and the real SQLite store: a question about two
events told on different days brings both; any other question is answered as without it.
Texts are written for this test (no benchmark data)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from tinycontext.app.service import MemoryService
from tinycontext.testing import FixedClock

ADOPTED = "We adopted a rescue beagle from the shelter today and named him Biscuit."
POTTERY = "I signed up for a six-week course at the arts centre to learn to throw bowls on a wheel."
# One conversation a day, six days apart; the dog comes back often, the course once.
DAYS = [
    [ADOPTED, "What should I buy for a beagle puppy's first week at home?"],
    ["Can you suggest a soup recipe that uses lentils?", "Explain how compound interest works."],
    [POTTERY],
    ["Biscuit finally learned to sit and stay at the park.",
     "How often should a beagle go to the vet for checkups?"],
    ["Biscuit pulls on the lead so hard on walks.",
     "Is it okay to give Biscuit peanut butter as a treat?"],
    ["Plan a 3-day itinerary for Lisbon.", "How do I fix a printer that jams every page?"],
    ["My beagle puppy Biscuit chewed my new shoes.", "Biscuit the beagle howls when I leave."],
]
PAIRED = "How many weeks after adopting my beagle puppy did I start the pottery class?"
SINGLE = "How often should I walk my dog?"


def _answers(
    make_real_service: Callable[..., MemoryService], on: bool
) -> dict[str, list[tuple[str, Any]]]:
    clock = FixedClock()
    service = make_real_service(clock=clock, recall_event_pairs=on)
    for day in DAYS:
        service.save([{"content": t} for t in day], session_id="u")
        clock.current += timedelta(days=6)
    return {
        question: [(m["content"], m["scores"]) for m in
                   service.recall(question, "u", 10**6, 3, count=False).to_dict()["memories"]]
        for question in (PAIRED, SINGLE)
    }


def test_both_events_come_back_only_when_on_and_other_questions_do_not_change(
    make_real_service: Callable[..., MemoryService]
) -> None:
    off, on = _answers(make_real_service, False), _answers(make_real_service, True)
    off_texts = [text for text, _ in off[PAIRED]]
    on_texts = [text for text, _ in on[PAIRED]]
    # Off, the dog's conversations fill the top 3 and the course is missing.
    assert ADOPTED in off_texts and POTTERY not in off_texts
    # On, the course joins right after the best result; the dog's own telling stays.
    assert on_texts[0] == off_texts[0] and on_texts[1] == POTTERY and ADOPTED in on_texts
    assert on[SINGLE] == off[SINGLE]
