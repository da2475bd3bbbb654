"""The dense-lead lever on real text and the real model: a fact worded unlike its question
(no shared word) that the model ranks first by a clear margin stays first, where memories
sharing the question's words in another sense used to push it down."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tinycontext.config.engine import TinyContextConfig
from tinycontext.entry.container import build_service

QUESTION = "Can we ship releases over the holidays?"
FACT = "Production deploys are frozen from 20 December until 5 January."
SAME_WORDS_OTHER_SENSE = [
    "Press releases go through the communications team before they are published.",
    "The holiday rota for the support desk is pinned in the team channel.",
    "The holidays in August are the best time to visit the mountains.",
    "New releases of the photo app are announced on the company blog.",
    "The ship in the harbour painting hangs in the meeting room.",
    "Holiday photos from the team trip are in the shared drive.",
]
UNRELATED = [
    "The coffee machine on the second floor was repaired on Monday.",
    "Lunch orders for the team go in before eleven.",
    "The printer toner is in the supply cupboard.",
    "Parking spaces are assigned by seniority.",
    "The gym in the basement opens at six.",
    "Our standup moved to half past nine.",
    "The wiki page on onboarding was rewritten.",
    "The library of design icons lives in the assets folder.",
    "Meeting rooms can be booked in the calendar.",
    "The plants on the windowsill need water twice a week.",
    "The fire drill is on the first Tuesday of the month.",
    "The tennis club meets on Saturday mornings.",
    "The bakery next door sells rye bread.",
    "Bike racks are behind the building.",
    "The quarterly report is due at the end of March.",
]


def first(service: Any) -> str:
    out = service.recall(QUESTION, "s", top_k=5, max_tokens=10**6).to_dict()["memories"]
    return str(out[0]["content"])


def test_a_paraphrase_the_model_ranks_first_by_a_margin_stays_first(
    tmp_path: Path, real_embedder: Any,
) -> None:
    service = build_service(
        TinyContextConfig(memory_db_path=str(tmp_path / "m.db"), save_context_minutes=0),
        embedder=real_embedder, background=False,
    )
    try:
        service.save(
            [{"content": c} for c in [FACT, *SAME_WORDS_OTHER_SENSE, *UNRELATED]], "s")
        assert first(service) == FACT
    finally:
        service.close()
    # Without the lever a memory sharing "holiday" won on some CPUs and not on others
    # (onnxruntime's integer kernels round differently, e.g. AVX2 alone against VNNI), so
    # whether this case needs the lever is not asserted; the lever's exact effect on the
    # fused scores is pinned in tests/unit/test_dense_lead.py.
