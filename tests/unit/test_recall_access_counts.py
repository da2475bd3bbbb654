"""With the access lever on (recall_access_weight > 0) recall still counts what it returns,
and count=False still leaves counts alone: the competition-rank loop once reused the name
of the `count` flag, so the smallest recall count among the candidates decided instead."""

from __future__ import annotations

import itertools

import pytest

from tinycontext.app.service import MemoryService
from tinycontext.config.engine import TinyContextConfig
from tinycontext.testing import FixedClock, HashEmbedder, InMemoryStore, WordTokenizer


def _service() -> MemoryService:
    counter = itertools.count(1)
    return MemoryService(
        InMemoryStore(), HashEmbedder(), WordTokenizer(), FixedClock(),
        TinyContextConfig(recall_access_weight=0.5), background=False,
        new_id=lambda: f"{next(counter):08x}-0000-4000-8000-000000000000",
    )


@pytest.mark.parametrize("count", [True, False])
def test_the_access_lever_does_not_change_what_is_counted(count: bool) -> None:
    service = _service()
    service.save([{"content": "Billing runs on PostgreSQL."},
                  {"content": "Deploys happen on Tuesdays."}])
    # One memory recalled before, one never: the candidates' counts are 1 and 0.
    service.recall("billing PostgreSQL", top_k=1)
    answer = service.recall("billing deploys PostgreSQL Tuesdays", top_k=2,
                            max_tokens=10**6, count=count).to_dict()
    counts = {m["ref"]: service.detail(m["ref"]).to_dict()["recall_count"]
              for m in answer["memories"]}
    assert counts == {"000000010000": 2 if count else 1, "000000020000": 1 if count else 0}
