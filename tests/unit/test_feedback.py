"""Pseudo-relevance feedback's word choice and shares (domain.feedback)."""

from __future__ import annotations

from tinycontext.domain.feedback import (
    feedback_candidates,
    feedback_shares,
    feedback_terms,
    held_shares,
    reweigh,
)
from tinycontext.domain.recall import Candidate, FusionWeights, fusion_base


def test_candidates_leave_out_asked_words_stopwords_short_words_and_numbers() -> None:
    docs = [["zermatt", "the", "matterhorn", "go", "2023", "trip"], ["trip", "cabl", "car"]]
    assert feedback_candidates(docs, {"trip"}, {"the"}) == ["zermatt", "matterhorn", "cabl",
                                                           "car"]
    assert feedback_candidates([], {"a"}, set()) == []


def test_terms_prefer_rare_words_the_best_results_share() -> None:
    docs = [["zermatt", "matterhorn", "hotel"], ["zermatt", "cabl"], ["zermatt", "hotel"]]
    idf = {"zermatt": 4.0, "matterhorn": 5.0, "hotel": 3.0, "cabl": 4.5}
    # zermatt: 4.0 x 3; hotel 3.0 x 2; matterhorn 5.0 x 1; cabl 4.5 x 1.
    assert feedback_terms(docs, idf, limit=2) == ["zermatt", "hotel"]
    assert feedback_terms(docs, idf, limit=10) == ["zermatt", "hotel", "matterhorn", "cabl"]


def test_terms_drop_common_words_and_words_the_store_lacks() -> None:
    docs = [["really", "zermatt", "unknown"]]
    assert feedback_terms(docs, {"really": 0.7, "zermatt": 4.0}, min_idf=2.5) == ["zermatt"]
    assert feedback_terms(docs, {"really": 0.7}, min_idf=2.5) == []


def test_equal_weights_go_to_the_word_met_first() -> None:
    docs = [["beta", "alpha"]]
    idf = {"alpha": 3.0, "beta": 3.0}
    assert all(feedback_terms(docs, idf, limit=1) == ["beta"] for _ in range(5))


def test_shares_are_relative_to_the_larger_of_best_score_and_scale() -> None:
    assert feedback_shares({"a": 2.0, "b": 1.0}, 0.0) == {"a": 1.0, "b": 0.5}
    assert feedback_shares({"a": 2.0, "b": 1.0}, 4.0) == {"a": 0.5, "b": 0.25}
    assert feedback_shares({}, 0.0) == {}
    assert feedback_shares({"a": 0.0}, 0.0) == {}


def test_fusion_adds_the_weighted_feedback_share_and_nothing_without_it() -> None:
    candidates = [Candidate("a", "t", 1, 2.0, 1, 0.5), Candidate("b", "t", None, None, 2, 0.4)]
    off = fusion_base(candidates, FusionWeights(method="score", keyword=0.4))
    on = fusion_base(candidates, FusionWeights(method="score", keyword=0.4, feedback=0.2),
                     feedback={"b": 0.5})
    assert on[0] == off[0]
    assert abs(on[1] - off[1] - 0.1) < 1e-12
    # A weight of zero ignores the shares.
    assert fusion_base(candidates, FusionWeights(method="score", keyword=0.4),
                       feedback={"b": 1.0}) == off


def test_words_of_the_stronger_results_weigh_more() -> None:
    docs = [["zermatt", "bakeri"], ["kiln"]]
    idf = {"zermatt": 3.0, "bakeri": 3.0, "kiln": 4.0}
    assert feedback_terms(docs, idf, limit=1) == ["kiln"]
    assert feedback_terms(docs, idf, [1.0, 0.5], limit=2) == ["zermatt", "bakeri"]


def test_held_shares_are_each_documents_share_of_the_words_idf() -> None:
    docs = {"a": {"kilkenni", "studio", "bakeri"}, "b": {"bakeri", "marbl"}, "c": {"kiln"},
            "d": ["studio", "studio"]}
    idf = {"kilkenni": 4.0, "studio": 2.0, "bakeri": 3.0, "marbl": 1.0}
    # Scale: 4 + 2 + 3 + 1 = 10 ("unseen" is held nowhere in the store: it weighs nothing).
    shares = held_shares(docs, idf, ["kilkenni", "studio", "bakeri", "marbl", "unseen"])
    assert shares == {"a": 0.9, "b": 0.4, "d": 0.2}  # "c" holds none of the words


def test_held_shares_count_a_word_once_and_need_some_weight() -> None:
    assert held_shares({"a": ["x", "x", "y"]}, {"x": 1.0, "y": 3.0}, ["x", "y", "x"]) == {
        "a": 1.0}
    assert held_shares({"a": {"x"}}, {"x": 0.0}, ["x"]) == {}
    assert held_shares({"a": {"x"}}, {}, ["x"]) == {}
    assert held_shares({"a": {"x"}}, {"x": 1.0}, []) == {}


def test_reweigh_adds_the_weighted_share_to_each_candidates_score() -> None:
    assert reweigh([1.0, 0.5, 0.25], ["a", "b", "c"], {"b": 0.5, "c": 1.0}, 0.5) == [
        1.0, 0.75, 0.75]
    assert reweigh([1.0, 0.5], ["a", "b"], {"b": 1.0}, 0.0) == [1.0, 0.5]
    assert reweigh([1.0, 0.5], ["a", "b"], {}, 0.5) == [1.0, 0.5]
