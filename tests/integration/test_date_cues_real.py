"""The date-cue lever on the real model and SQLite: a question naming a month puts the
memory dated in that month first among memories about the same thing, where words and
meaning alone cannot tell them apart (an ISO date shares no word with "March")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tinycontext.config.engine import TinyContextConfig
from tinycontext.entry.container import build_service

HIKES = [
    "On 2023-03-02 we went hiking at Lake Tahoe with the kids.",
    "On 2023-07-09 we went hiking on Mount Rainier with the kids.",
    "On 2022-03-05 we went hiking in the Alps with the kids.",
    "The kids love swimming at the lake in summer.",
]
QUESTION = "Where did we go hiking in March 2023?"


def test_a_question_naming_a_month_prefers_the_memory_dated_in_it(
    tmp_path: Path, real_embedder: Any,
) -> None:
    service = build_service(
        TinyContextConfig(memory_db_path=str(tmp_path / "m.db"), save_context_minutes=0),
        embedder=real_embedder, background=False,
    )
    try:
        service.save([{"content": c} for c in HIKES], "s")

        def first() -> str:
            out = service.recall(QUESTION, "s", top_k=5, max_tokens=10**6).to_dict()
            return str(out["memories"][0]["content"])

        assert first() == HIKES[0]
        service.close()
        # Without the cue (its setting at 0) another hike wins.
        service = build_service(
            TinyContextConfig(memory_db_path=str(tmp_path / "m.db"), save_context_minutes=0,
                              recall_date_cue_weight=0.0),
            embedder=real_embedder, background=False,
        )
        assert first() != HIKES[0]
    finally:
        service.close()
