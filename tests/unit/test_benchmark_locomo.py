"""LoCoMo loader, turn rendering and duplicate crediting of the benchmark, on a tiny file."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.benchmark_locomo import SessionClock, groups_of, ingest
from benchmarks.datasets import load_locomo
from benchmarks.metrics import recall_at_k
from tests.fakes import FixedClock, HashEmbedder, InMemoryStore, WordTokenizer
from tinycontext.config.engine import TinyContextConfig
from tinycontext.entry.container import build_service

SAMPLE = [
    {
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_2_date_time": "3:00 pm on 9 May, 2023",
            "session_2": [
                {"speaker": "Ben", "dia_id": "D2:1", "text": "See you at the match tonight."},
            ],
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a puppy named Taco!"},
                {"speaker": "Ben", "dia_id": "D1:2", "text": "Look at this.",
                 "img_url": ["https://example.invalid/a.jpg"],
                 "blip_caption": "a photo of a red bicycle"},
                {"speaker": "Ana", "dia_id": "D1:3", "text": "I adopted a puppy named Taco!"},
            ],
        },
        "qa": [
            {"question": "What is the puppy called?", "answer": "Taco",
             "evidence": ["D1:3"], "category": 4},
            {"question": "When was the match?", "answer": "9 May",
             "evidence": ["D2:01; D1:2", "D:1:1", "D7:7", "D"], "category": 2},
            {"question": "Is Ana an ally?", "answer": "yes", "evidence": [], "category": 3},
            {"question": "Did Ben sell the bike?", "adversarial_answer": "no",
             "category": 5},
        ],
    }
]


def _load(tmp_path: Path):
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(SAMPLE), encoding="utf-8")
    return load_locomo(path)


def test_turns_come_in_session_order_and_render_with_date_speaker_and_caption(
    tmp_path: Path,
) -> None:
    (conv,) = _load(tmp_path)
    assert [t.dia_id for t in conv.turns] == ["D1:1", "D1:2", "D1:3", "D2:1"]
    assert conv.turns[0].render() == "[1:56 pm on 8 May, 2023] Ana: I adopted a puppy named Taco!"
    assert conv.turns[1].render() == (
        "[1:56 pm on 8 May, 2023] Ben: Look at this. [shared a photo: a photo of a red bicycle]"
    )
    assert conv.turns[3].render() == "[3:00 pm on 9 May, 2023] Ben: See you at the match tonight."


def test_malformed_unknown_and_missing_evidence(tmp_path: Path) -> None:
    (conv,) = _load(tmp_path)
    single, temporal, no_evidence, adversarial = conv.qas
    assert single.evidence == ("D1:3",)
    assert temporal.evidence == ("D2:1", "D1:2", "D1:1")
    assert temporal.unknown_evidence == ("D7:7",)
    assert no_evidence.evidence == ()
    assert adversarial.evidence == () and adversarial.category == 5


def test_a_turn_skipped_as_duplicate_credits_the_memory_it_duplicates(tmp_path: Path) -> None:
    (conv,) = _load(tmp_path)
    service = build_service(
        TinyContextConfig(memory_db_path=str(tmp_path / "unused.db")),
        store=InMemoryStore(), embedder=HashEmbedder(), tokenizer=WordTokenizer(),
        clock=FixedClock(), background=False,
    )
    from benchmarks._common import Progress

    saved = ingest(service, conv, Progress("test", quiet=True))
    assert saved["skipped"] == 1  # D1:3 repeats D1:1 word for word, same date and speaker
    covers = saved["covers"]
    assert len(covers) == 3
    assert {"D1:1", "D1:3"} in covers.values()
    answer = service.recall("puppy Taco", conv.sample_id, 10**9, 1).to_dict()
    ranked = [sorted(covers[m["id"]]) for m in answer["memories"]]
    assert recall_at_k(ranked, conv.qas[0].evidence, 1) == 1.0


def test_category_and_half_groups() -> None:
    assert groups_of(2, 1) == ["overall (1-4)", "2 temporal", "all (1-5)",
                               "tune 1-5: overall (1-4)", "tune 1-5: 2 temporal",
                               "tune 1-5: all (1-5)"]
    assert groups_of(5, 6) == ["5 adversarial", "all (1-5)", "check 6-10: 5 adversarial",
                               "check 6-10: all (1-5)"]
    assert groups_of(4, 11)[-1] == "conversations 11+: all (1-5)"


def test_the_plain_shape_is_the_text_alone_dated_by_the_session(tmp_path: Path) -> None:
    (conv,) = _load(tmp_path)
    assert conv.turns[1].render(False) == (
        "Look at this. [shared a photo: a photo of a red bicycle]")
    clock = SessionClock()
    service = build_service(
        TinyContextConfig(memory_db_path=str(tmp_path / "unused.db")),
        store=InMemoryStore(), embedder=HashEmbedder(), tokenizer=WordTokenizer(),
        clock=clock, background=False,
    )
    from benchmarks._common import Progress

    saved = ingest(service, conv, Progress("test", quiet=True), False, clock)
    dated = {turn: m["created_at"] for m in service.list_page(
        session_id=conv.sample_id).to_dict()["memories"] for turn in saved["covers"][m["id"]]}
    assert dated["D1:1"].startswith("2023-05-08T13:56")
    assert dated["D2:1"].startswith("2023-05-09T15:00")
