"""Each lever of the recall ranking on real text: the real model and the real SQLite store.

One case per lever that it fixes: score fusion, the keyword scale, stemming,
keyword context, dense context and late interaction. Texts are written for these tests (no
benchmark data).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from tests.errands import FILLER
from tinycontext.app.service import MemoryService
from tinycontext.app.vectors import cosine
from tinycontext.domain.text import recall_terms
from tinycontext.ports.store import Scope
from tinycontext.testing import FixedClock

SCOPE = Scope("episodic", "s")
Make = Callable[..., MemoryService]  # the make_real_service fixture (conftest.py)
KEYS = "Zephyrine keeps the spare office keys in the blue tin."
KEY_DISTRACTORS = [
    "The office moved to a new building with a keycard entrance last year.",
    "Office keys are handed out by facilities on the first day of work.",
    "Lost keys must be reported to security within one day.",
    "The spare keycards for visitors are kept at the reception desk.",
    "Keys to the server room are only given to the infrastructure team.",
    "We changed the locks on the office doors after the break-in.",
    "The cleaning crew has its own set of keys for the whole floor.",
    "Bike storage keys can be borrowed from the front desk.",
    "The key cabinet in the hallway needs a PIN code to open.",
    "Office access outside working hours needs manager approval.",
    "Spare parking permits are kept by the office manager.",
    "The old office keys were collected when the team moved.",
]
POTTERY = [
    "Melanie: I finally signed up for the Thursday pottery class at the community centre.",
    "Melanie: My first piece is a lopsided little bowl, drying on the windowsill now.",
    "Caroline: My brother is visiting from Denver next week.",
    "Melanie: Send him my best! Is he still working at the bike shop?",
]


def recall(service: MemoryService, query: str) -> list[dict[str, Any]]:
    return list(service.recall(query, "s", top_k=10, max_tokens=10**6).to_dict()["memories"])


def save_sitting(service: MemoryService, clock: FixedClock, texts: list[str]) -> None:
    """One sitting: each text saved on its own, half a minute after the one before."""
    for text in texts:
        service.save([{"content": text}], session_id="s")
        clock.advance(30)


def sitting_then_days(make_real_service: Make, lever: dict[str, float], sitting: list[str],
                      later: list[str], days: int, question: str, top_k: int) -> list[str]:
    """The top `top_k` contents for `question` after one sitting and then `later`, each saved
    `days` after the one before, on a real store with the `lever` settings."""
    clock = FixedClock()
    service = make_real_service(clock=clock, **lever)
    save_sitting(service, clock, sitting)
    for text in later:
        clock.current += timedelta(days=days)
        service.save([{"content": text}], session_id="s")
    result = service.recall(question, "s", 10**6, top_k).to_dict()
    return [m["content"] for m in result["memories"]]


def test_score_fusion_keeps_a_strong_keyword_match_first(make_real_service: Make) -> None:
    plain = {"save_context_minutes": 0, "recall_late_interaction": False}
    question = "Who has the spare keys for the office?"
    scored, ranked = make_real_service(**plain), make_real_service(recall_fusion="rrf", **plain)
    for service in (scored, ranked):
        service.save([{"content": c} for c in [KEYS, *KEY_DISTRACTORS]], "s")
    # The only memory with "spare", "office" and "keys" together is first by score fusion;
    # rank fusion averaged its keyword lead with a middling dense rank and put it second,
    # behind a memory that matches no rare word at all.
    assert recall(scored, question)[0]["content"] == KEYS
    by_rank = recall(ranked, question)
    assert by_rank[0]["content"] != KEYS and by_rank[1]["content"] == KEYS


def test_stemming_matches_other_forms_of_a_word(make_real_service: Make) -> None:
    service = make_real_service(save_context_minutes=0)  # the words of the memory alone
    painted = "Melanie painted a sunset over the lake last weekend."
    service.save([{"content": painted},
                  {"content": "Melanie took her kids to the beach in July."},
                  {"content": "Caroline is researching adoption agencies."}], "s")
    [top, *_] = recall(service, "What paintings has Melanie made?")
    # "paintings" and "painted" share only their stem.
    assert top["content"] == painted and top["scores"]["bm25"] is not None
    hits = service.store.keyword_search([["paintings"]], SCOPE, 10)
    assert [h.memory.content for h in hits] == [painted]


def test_keyword_context_finds_a_reply_by_what_it_answers(make_real_service: Make) -> None:
    with_context, without = make_real_service(), make_real_service(save_context_minutes=0)
    for service in (with_context, without):
        service.save([{"content": c} for c in POTTERY], "s")
    reply = POTTERY[1]  # names neither pottery nor the class
    hits = with_context.store.keyword_search([["pottery"], ["class"]], SCOPE, 10)
    assert [h.memory.content for h in hits][:2] == [POTTERY[0], reply]
    assert reply not in [
        h.memory.content
        for h in without.store.keyword_search([["pottery"], ["class"]], SCOPE, 10)
    ]
    found = [m["content"] for m in recall(with_context, "What did Melanie make in pottery class?")]
    assert reply in found[:2]


def test_dense_context_brings_a_reply_closer_to_its_question(
    make_real_service: Make, real_embedder: Any
) -> None:
    service = make_real_service()
    service.save([{"content": c} for c in POTTERY], "s")
    question = "What did Melanie make in pottery class?"
    reply = POTTERY[1]
    [hit] = [m for m in recall(service, question) if m["content"] == reply]
    own, asked = real_embedder.embed([reply, question])
    assert hit["scores"]["dense"] > cosine(own, asked) + 0.02


def test_late_interaction_lifts_the_memory_whose_words_answer_the_question(
    make_real_service: Make
) -> None:
    favourite = "Caroline's favourite book is Becoming by Michelle Obama; she rereads it often."
    facts = [favourite,
             "Caroline reads a lot of books about identity and self-acceptance.",
             "Melanie recommended a few novels to Caroline for her summer holiday.",
             "Caroline says reading before bed helps her sleep."]
    on, off = make_real_service(), make_real_service(recall_late_interaction=False)
    for service in (on, off):
        service.save([{"content": f} for f in facts], "s")
    question = "What book does Caroline like most?"
    # Pooled vectors and BM25 prefer the memory about books in general; matching token by
    # token ("like most" ~ "favourite") puts the answer first.
    assert recall(off, question)[0]["content"] != favourite
    assert recall(on, question)[0]["content"] == favourite


HOLIDAY_FILLER = [
    "The holiday party is on the second Friday of December.",
    "Holiday requests go to your manager two weeks ahead.",
    "The team standup moved to 9:30 on Mondays.",
    "Invoices are approved by the finance lead before payment.",
    "Logs are kept for thirty days and then deleted.",
    "The guest wifi is separate from the office network.",
]


def test_keyword_scale_is_what_the_question_asks_for_not_the_best_match(
    make_real_service: Make
) -> None:
    service = make_real_service(save_context_minutes=0)
    service.save([{"content": c} for c in HOLIDAY_FILLER], "s")
    question = "Is shipping code allowed during the holidays?"
    terms = recall_terms(question)
    ideal = service.store.keyword_ideal(terms)
    [best, second] = service.store.keyword_search(terms, SCOPE, 10)
    # The two matches share one word ("holidays") of the four the question names: against
    # the question's scale they score well under half, where "best of the pool" made the
    # first a perfect keyword match.
    assert {best.memory.content, second.memory.content} == set(HOLIDAY_FILLER[:2])
    assert best.score < ideal / 2
    service.save([{"content": "We ship code, review code and allow holidays."}], "s")
    [full, *_] = service.store.keyword_search(terms, SCOPE, 10)
    assert full.memory.content.startswith("We ship code")
    assert full.score > service.store.keyword_ideal(terms) / 2


def test_spread_gives_a_slot_to_another_day_only_when_on(make_real_service: Make) -> None:
    """Three near-identical memories of one sitting and one of a later day, on the real store:
    with recall_spread_weight the later day's memory takes the second slot; off, it does not."""
    sitting = [
        "We booked the cabin by the lake for the family reunion in August.",
        "The family reunion cabin by the lake is booked for August.",
        "August family reunion: the lake cabin is booked.",
    ]
    later = "For the reunion, grandma asked that we bring the old photo albums."
    tops = {weight: sitting_then_days(make_real_service, {"recall_spread_weight": weight},
                                      sitting, [later], 3, "family reunion lake cabin", 2)
            for weight in (0.0, 1.0)}
    assert tops[0.0][0] in sitting and tops[0.0][1] in sitting
    assert tops[1.0][0] == tops[0.0][0] and tops[1.0][1] == later


def test_moment_prior_lifts_the_best_sittings_turns_only_when_on(make_real_service: Make) -> None:
    """One sitting about adopting a dog, then lone memories on later days that share a word
    with the question, on the real store: with recall_moment_weight the sitting's third turn
    (which names no word of the question) takes the third slot; off, a later day's lone
    match does."""
    sitting = [
        "We finally adopted the rescue greyhound from the shelter on Saturday.",
        "She spent the whole first evening curled up on the rug by the fireplace.",
        "The kids want to call her Pepper.",
    ]
    later = [
        "Greyhound buses to the coast leave from the central station.",
        "The shelter downtown is collecting blankets for the winter.",
        "Saturday's football match was cancelled because of the rain.",
        "I bought a new rug for the hallway.",
    ]
    question = "Where did the rescue greyhound sleep on her first evening?"
    tops = {weight: sitting_then_days(make_real_service, {"recall_moment_weight": weight},
                                      sitting, later, 2, question, 3)
            for weight in (0.0, 0.8)}
    assert tops[0.0][:2] == sitting[:2] and tops[0.0][2] in later
    assert tops[0.8] == sitting


def test_facet_coverage_gives_the_other_part_of_the_question_a_slot_only_when_on(
    make_real_service: Make,
) -> None:
    """A question about two things told on different days, on the real store: one sitting
    names the vineyards three times, another day the tram. Off, the sitting fills the first
    three slots; with recall_facet_weight the tram memory takes the second."""
    sitting = [
        "Our guide in Porto said the Douro vineyards are terraced by hand.",
        "The guide said the Douro vineyards harvest their grapes in late September.",
        "The guide told us the best Douro vineyards sit right above the river.",
    ]
    tram = "Tram 28 climbs through Alfama past the cathedral every ten minutes."
    others = [
        "The hotel breakfast had fresh pastries every morning.",
        "We bought a cork notebook at the airport.",
    ]
    question = ("What did the guide say about the Douro vineyards, and which tram goes "
                "through Alfama?")
    tops = {weight: sitting_then_days(make_real_service, {"recall_facet_weight": weight},
                                      sitting, [tram, *others], 3, question, 3)
            for weight in (0.0, 0.6)}
    assert sorted(tops[0.0]) == sorted(sitting)
    assert tops[0.6][0] == tops[0.0][0] and tops[0.6][1] == tram


STUDIO = "Orla rented a pottery studio in Kilkenny, beside the Marble City bakery."
BAKERY = "Rent went up for every shop beside the Marble City bakery in Kilkenny."
STUDIO_NEIGHBOURS = [
    "Pottery glazes need a second firing in the kiln.",
    "A studio flat downtown costs more than a house in the suburbs.",
    "The pottery fair is on the first weekend of June.",
]


def studio_tops(make_real_service: Make, lever: str) -> dict[float, list[str]]:
    """The top 3 for a question about Orla's studio, with the feedback `lever` off and on."""
    tops = {}
    for weight in (0.0, 1.0):
        service = make_real_service(**{lever: weight}, save_context_minutes=0)
        service.save([{"content": t} for t in [*FILLER, *STUDIO_NEIGHBOURS]], "s")
        service.save([{"content": STUDIO}, {"content": BAKERY}], "s")
        found = service.recall("Where is Orla's pottery studio?", "s", 10**6, 3).to_dict()
        tops[weight] = [m["content"] for m in found["memories"]]
    return tops


def test_feedback_brings_a_memory_about_the_best_results_topic_only_when_on(
    make_real_service: Make
) -> None:
    """The bakery memory shares no word with the question, only rare words with the best
    result: feedback lifts it over memories that share a common query word; off, it does not."""
    tops = studio_tops(make_real_service, "recall_feedback_weight")
    assert tops[0.0][0] == STUDIO and BAKERY not in tops[0.0]
    assert tops[1.0][0] == STUDIO and BAKERY in tops[1.0]


def test_keyword_rarity_is_the_idf_of_stored_words(make_real_service: Make) -> None:
    service = make_real_service()
    service.save([{"content": t} for t in [*FILLER, STUDIO, BAKERY]], "s")
    rarity = service.store.keyword_rarity(["kilkenni", "the", "zzzunseen"])
    assert set(rarity) == {"kilkenni", "the"}
    assert rarity["kilkenni"] > 2.5 > rarity["the"]


def test_feedback_in_hand_lifts_a_memory_about_the_best_results_topic_only_when_on(
    make_real_service: Make
) -> None:
    """Without a second query: the bakery memory is among the candidates already (the dense
    side hands over every memory of this small store) but below the top 3; re-weighed by the
    rare words it shares with the best result, it rises into them. Off, it does not."""
    tops = studio_tops(make_real_service, "recall_feedback_inhand_weight")
    assert tops[0.0][0] == STUDIO and BAKERY not in tops[0.0]
    assert tops[1.0][0] == STUDIO and BAKERY in tops[1.0]
