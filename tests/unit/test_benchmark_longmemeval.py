"""LongMemEval loader and scoring on a tiny file in the official format, with hand-computed
expected metrics (the dataset itself is not available here)."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path
from typing import Any

import pytest

from benchmarks import benchmark_longmemeval
from benchmarks.datasets import deterministic_sample, lme_memories, load_longmemeval


def _item(qid: str, qtype: str, question: str, sessions: dict[str, list[dict[str, Any]]],
          answers: list[str], date: str = "2023/05/20 (Sat) 02:21") -> dict[str, Any]:
    return {
        "question_id": qid, "question_type": qtype, "question": question,
        "question_date": "2023/06/01 (Thu) 10:00", "answer": "-",
        "haystack_session_ids": list(sessions), "haystack_dates": [date] * len(sessions),
        "haystack_sessions": list(sessions.values()), "answer_session_ids": answers,
    }


def user(text: str, **extra: Any) -> dict[str, Any]:
    return {"role": "user", "content": text, **extra}


def assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


ITEMS = [
    # Gold session holds the only turn sharing a word with the question: ranked first.
    _item("q1", "single-session-user", "Zorblax diet?", {
        "a1": [user("my cat zorblax loves tuna", has_answer=True), assistant("nice")],
        "a2": [user("planning a hike near lakes"), assistant("zorblax zorblax zorblax")],
        "a3": [user("bought new running shoes"), user("   ")],
    }, ["a1"]),
    # Two gold sessions, only one reachable with one recalled turn.
    _item("q2", "multi-session", "Quintessa concert?", {
        "b1": [user("tickets for quintessa concert")],
        "b2": [user("saturday evening plans changed")],
        "b3": [user("gardening tomatoes weekly")],
    }, ["b1", "b2"]),
    # The same turn in two sessions: the second is skipped as a duplicate and credits the first.
    _item("q3", "knowledge-update", "Pelargonium festival?", {
        "c1": [user("pelargonium festival tickets")],
        "c2": [user("pelargonium festival tickets")],
        "c3": [user("dentist moved")],
    }, ["c2"]),
    _item("q4_abs", "single-session-user", "Unanswerable?", {"d1": [user("x y z")]}, ["d1"]),
    _item("q5", "temporal-reasoning", "Missing gold?", {"e1": [user("alpha beta")]}, ["zz"]),
]


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "longmemeval_tiny.json.gz"
    path.write_bytes(gzip.compress(json.dumps(ITEMS).encode()))
    return path


def test_loader_reads_gzip_and_plain_json(data_file: Path, tmp_path: Path) -> None:
    questions = load_longmemeval(data_file)
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(ITEMS), encoding="utf-8")
    assert load_longmemeval(plain) == questions
    assert [q.question_id for q in questions] == ["q1", "q2", "q3", "q4_abs", "q5"]
    assert [q.abstention for q in questions] == [False, False, False, True, False]
    q1 = questions[0]
    assert [s.session_id for s in q1.sessions] == ["a1", "a2", "a3"]
    assert q1.answer_session_ids == ("a1",)


def test_user_turns_by_default_all_turns_on_request(data_file: Path) -> None:
    q1 = load_longmemeval(data_file)[0]
    assert lme_memories(q1) == [
        ("a1", "[2023/05/20 (Sat) 02:21] user: my cat zorblax loves tuna"),
        ("a2", "[2023/05/20 (Sat) 02:21] user: planning a hike near lakes"),
        ("a3", "[2023/05/20 (Sat) 02:21] user: bought new running shoes"),
    ]
    assert len(lme_memories(q1, "all")) == 5  # the blank turn is never saved


def test_missing_field_is_reported(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps([{"question_id": "x"}]), encoding="utf-8")
    with pytest.raises(ValueError, match="item 0 lacks"):
        load_longmemeval(broken)


def test_deterministic_sample_keeps_file_order(data_file: Path) -> None:
    questions = load_longmemeval(data_file)
    first = deterministic_sample(questions, 3, seed=1)
    assert first == deterministic_sample(questions, 3, seed=1)
    assert len(first) == 3
    positions = [questions.index(q) for q in first]
    assert positions == sorted(positions)
    assert deterministic_sample(questions, None) == questions


def test_end_to_end_metrics_match_hand_computed_values(data_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    code = benchmark_longmemeval.main(
        ["--data", str(data_file), "--model", "hash", "--turn-depth", "1", "--quiet",
         "--json-out", str(out)]
    )
    assert code == 0
    result = json.loads(out.read_text())["results"]
    stats = result["stats"]
    assert stats["abstention_skipped"] == 1
    assert stats["skipped_no_answer_session"] == 1
    assert stats["questions"] == 3
    assert stats["skipped_duplicates"] == 1
    partial = 1 / (1 + 1 / math.log2(3))  # one of two gold sessions, at rank 1: 0.6131
    rank_two = 1 / math.log2(3)  # the gold session second (c1 sorts before c2): 0.6309
    for mode in ("unlimited", "default-budget"):
        groups = result["modes"][mode]
        q1 = groups["single-session-user"]
        assert (q1["recall_all@5"], q1["recall_any@5"], q1["ndcg@5"]) == (1.0, 1.0, 1.0)
        q2 = groups["multi-session"]
        assert (q2["recall_all@5"], q2["recall_any@5"]) == (0.0, 1.0)
        assert q2["ndcg@10"] == pytest.approx(partial)
        q3 = groups["knowledge-update"]
        assert (q3["recall_all@5"], q3["recall_any@5"]) == (1.0, 1.0)
        assert q3["ndcg@5"] == pytest.approx(rank_two)
        overall = groups["overall"]
        assert overall["n"] == 3
        assert overall["recall_all@10"] == pytest.approx(2 / 3)
        assert overall["recall_any@10"] == 1.0
        assert overall["ndcg@5"] == pytest.approx((1 + partial + rank_two) / 3)
