"""The benchmark metric functions, against values computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchmarks.metrics import (
    Scoreboard,
    collapse,
    hit_at_k,
    mean,
    ndcg_at_k,
    overlap_at_k,
    parse_locomo_evidence,
    percentile,
    recall_all_at_k,
    recall_any_at_k,
    recall_at_k,
    reciprocal_rank,
)

# Three retrieved memories; the second stands for two turns (one was skipped as its duplicate).
RANKED = [["D1:1"], ["D1:2", "D1:5"], ["D1:3"]]
GOLD = ["D1:5", "D1:3", "D1:9"]


class TestLocomoEvidence:
    @pytest.mark.parametrize(
        ("raw", "expected"),
        [
            (["D1:3"], ["D1:3"]),
            (["D8:6; D9:17"], ["D8:6", "D9:17"]),
            (["D:11:26"], ["D11:26"]),
            (["D30:05"], ["D30:5"]),
            (["D9:1 D4:4 D4:6"], ["D9:1", "D4:4", "D4:6"]),
            (["D"], []),
            ([], []),
            (None, []),
            ("D2:7", ["D2:7"]),
            (["D1:3", "D1:03", "D2:1"], ["D1:3", "D2:1"]),
        ],
    )
    def test_parses_and_normalises(self, raw: object, expected: list[str]) -> None:
        assert parse_locomo_evidence(raw) == expected  # type: ignore[arg-type]


class TestRecallAndHit:
    def test_recall_counts_turns_credited_through_a_duplicate(self) -> None:
        assert recall_at_k(RANKED, GOLD, 1) == 0.0
        assert recall_at_k(RANKED, GOLD, 2) == pytest.approx(1 / 3)
        assert recall_at_k(RANKED, GOLD, 3) == pytest.approx(2 / 3)
        assert recall_at_k(RANKED, GOLD, 25) == pytest.approx(2 / 3)

    def test_repeated_gold_labels_count_once(self) -> None:
        assert recall_at_k([["a"]], ["a", "a", "b"], 1) == 0.5

    def test_a_label_retrieved_twice_counts_once(self) -> None:
        assert recall_at_k([["a"], ["a"]], ["a", "b"], 2) == 0.5

    def test_hit(self) -> None:
        assert hit_at_k(RANKED, GOLD, 1) == 0.0
        assert hit_at_k(RANKED, GOLD, 2) == 1.0
        assert hit_at_k([], GOLD, 5) == 0.0

    def test_recall_all_and_any(self) -> None:
        ranked = [["s1"], ["s2"], ["s3"]]
        assert recall_all_at_k(ranked, ["s1", "s3"], 2) == 0.0
        assert recall_all_at_k(ranked, ["s1", "s3"], 3) == 1.0
        assert recall_any_at_k(ranked, ["s3"], 2) == 0.0
        assert recall_any_at_k(ranked, ["s3", "s2"], 2) == 1.0

    def test_no_gold_or_bad_k_is_an_error(self) -> None:
        with pytest.raises(ValueError):
            recall_at_k(RANKED, [], 5)
        with pytest.raises(ValueError):
            hit_at_k(RANKED, GOLD, 0)


class TestReciprocalRank:
    def test_first_relevant_rank(self) -> None:
        assert reciprocal_rank(RANKED, GOLD) == 0.5
        assert reciprocal_rank([["x"], ["y"], ["z"], ["D1:3"]], GOLD) == 0.25

    def test_cut_off(self) -> None:
        assert reciprocal_rank(RANKED, GOLD, k=1) == 0.0
        assert reciprocal_rank(RANKED, GOLD, k=2) == 0.5

    def test_nothing_relevant(self) -> None:
        assert reciprocal_rank([["x"]], GOLD) == 0.0
        assert reciprocal_rank([], GOLD) == 0.0

    def test_mean_reciprocal_rank(self) -> None:
        # Ranks 1, 2 and none: (1 + 0.5 + 0) / 3.
        rrs = [reciprocal_rank([["a"]], ["a"]), reciprocal_rank([["x"], ["a"]], ["a"]),
               reciprocal_rank([["x"]], ["a"])]
        assert mean(rrs) == pytest.approx(0.5)


class TestNdcg:
    def test_two_relevant_at_ranks_one_and_three(self) -> None:
        # DCG = 1/log2(2) + 1/log2(4) = 1.5; IDCG = 1 + 1/log2(3) = 1.6309298
        expected = 1.5 / (1 + 1 / math.log2(3))
        assert ndcg_at_k([["a"], ["x"], ["b"]], ["a", "b"], 3) == pytest.approx(expected)
        assert expected == pytest.approx(0.9197207)

    def test_single_relevant_at_rank_two(self) -> None:
        assert ndcg_at_k([["x"], ["a"]], ["a"], 5) == pytest.approx(1 / math.log2(3))

    def test_ideal_is_bounded_by_k(self) -> None:
        # Three relevant, k = 1, one found at rank 1: DCG = IDCG = 1.
        assert ndcg_at_k([["a"], ["b"]], ["a", "b", "c"], 1) == 1.0

    def test_only_one_of_two_relevant_found(self) -> None:
        # DCG = 1; IDCG = 1 + 1/log2(3) -> 0.6131472
        assert ndcg_at_k([["s1"]], ["s1", "s2"], 5) == pytest.approx(0.6131472)

    def test_repeated_and_multi_label_items_never_exceed_one(self) -> None:
        assert ndcg_at_k([["a"], ["a"]], ["a", "b"], 2) == pytest.approx(0.6131472)
        assert ndcg_at_k([["a", "b"]], ["a", "b"], 2) == pytest.approx(0.6131472)
        assert ndcg_at_k([["a"], ["b"]], ["a", "b"], 2) == 1.0

    def test_nothing_relevant(self) -> None:
        assert ndcg_at_k([["x"], ["y"]], ["a"], 2) == 0.0


def test_collapse_turns_to_sessions_first_occurrence_wins() -> None:
    turns = [["s2"], ["s3", "s1"], ["s2"], ["s4"]]
    assert collapse(turns) == [["s2"], ["s1"], ["s3"], ["s4"]]
    assert collapse([]) == []


class TestPercentile:
    def test_linear_interpolation(self) -> None:
        values = [4.0, 1.0, 3.0, 2.0]
        assert percentile(values, 0) == 1.0
        assert percentile(values, 50) == 2.5
        assert percentile(values, 95) == pytest.approx(3.85)
        assert percentile(values, 100) == 4.0
        assert percentile([7.0], 99) == 7.0

    def test_bad_input(self) -> None:
        with pytest.raises(ValueError):
            percentile([], 50)
        with pytest.raises(ValueError):
            percentile([1.0], 101)


def test_scoreboard_means_per_group() -> None:
    board = Scoreboard()
    board.add(["overall", "temporal"], {"recall@5": 1.0, "mrr": 0.5})
    board.add(["overall", "multi-hop"], {"recall@5": 0.0, "mrr": 0.25})
    assert board.groups() == ["overall", "temporal", "multi-hop"]
    assert board.count("overall") == 2
    assert board.means("overall") == {"recall@5": 0.5, "mrr": 0.375}
    assert board.means("temporal") == {"recall@5": 1.0, "mrr": 0.5}
    assert board.count("missing") == 0
    assert mean([]) == 0.0


def test_overlap_counts_ties_at_the_kth_score_as_found() -> None:
    matrix = np.array([[1, 0], [0.8, 0.6], [0.8, 0.6], [0, 1]], dtype=np.float32)
    query = np.array([1, 0], dtype=np.float32).tobytes()
    assert overlap_at_k(matrix, 4, query, [0, 2], 2) == 1.0  # row 2 ties with row 1
    assert overlap_at_k(matrix, 4, query, [0, 3], 2) == 0.5
    assert overlap_at_k(matrix, 1, query, [0], 10) == 1.0  # k larger than the store
