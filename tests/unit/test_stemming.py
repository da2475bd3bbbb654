"""The Porter stemmer (domain/stemming.py) and the stemmed keyword text (domain/text.py)."""

from __future__ import annotations

import pytest

from tinycontext.domain.stemming import stem
from tinycontext.domain.text import stem_groups, stemmed_terms


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        # Examples from Porter's paper, step by step.
        ("caresses", "caress"), ("ponies", "poni"), ("cats", "cat"), ("feed", "feed"),
        ("agreed", "agre"), ("plastered", "plaster"), ("motoring", "motor"), ("sing", "sing"),
        ("conflated", "conflat"), ("hopping", "hop"), ("falling", "fall"), ("filing", "file"),
        ("happy", "happi"), ("relational", "relat"), ("conditional", "condit"),
        ("rational", "ration"), ("digitizer", "digit"), ("operator", "oper"),
        ("triplicate", "triplic"), ("hopeful", "hope"), ("goodness", "good"),
        ("revival", "reviv"), ("adjustment", "adjust"), ("adoption", "adopt"),
        ("probate", "probat"), ("controll", "control"), ("roll", "roll"),
        # Words a question and its answer often differ by.
        ("hiking", "hike"), ("hiked", "hike"), ("paintings", "paint"), ("painted", "paint"),
        ("adopted", "adopt"), ("adopting", "adopt"), ("trekked", "trek"),
    ],
)
def test_porter_steps(word: str, expected: str) -> None:
    assert stem(word) == expected


@pytest.mark.parametrize("word", ["is", "as", "us", "e4711", "v2", "東京", "café", "ab"])
def test_short_non_letter_and_non_ascii_words_pass_through(word: str) -> None:
    assert stem(word) == word


def test_stemmed_terms_fold_then_stem_every_word() -> None:
    assert stemmed_terms("Naïve Cafés: we went HIKING in 東京 🎉 build.gradle") == (
        "naiv cafe we went hike in 東 京 emoji1f389 build gradl")


def test_stem_groups_keep_phrases_and_drop_repeats() -> None:
    assert stem_groups([["hiking"], ["hiked"], ["build", "gradle"], ["Naïve"]]) == [
        ["hike"], ["build", "gradl"], ["naiv"]]
