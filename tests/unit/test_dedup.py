"""Near-duplicate policy (domain/dedup.py): thresholds and 'never lose information'."""

from __future__ import annotations

import pytest

from tinycontext.domain.dedup import DedupVerdict, Neighbour, adds_nothing, judge

DUP, REVIEW = 0.95, 0.80
EXISTING = "The user prefers dark mode in the editor."


def verdict(new: str, *neighbours: Neighbour) -> DedupVerdict:
    return judge(new, neighbours, DUP, REVIEW)


@pytest.mark.parametrize(
    ("similarity", "skipped", "similar"),
    [
        (1.0, True, False),
        (0.95, True, False),  # exactly at the duplicate threshold: skipped
        (0.9499, False, True),  # just below: saved, flagged for review
        (0.80, False, True),  # exactly at the review threshold: flagged
        (0.7999, False, False),  # just below: nothing to report
        (0.0, False, False),
    ],
)
def test_thresholds_for_a_pure_repeat(similarity, skipped, similar):
    n = Neighbour("aaaaaaaaaaaa", EXISTING, similarity)
    v = verdict(EXISTING, n)
    assert (v.skip_as_duplicate_of is n) is skipped
    assert (v.similar_to is n) is similar


def test_different_date_at_097_is_saved_with_similar_to():
    n = Neighbour("aaaaaaaaaaaa", "moved to Berlin on 3 March", 0.97)
    v = verdict("moved to Berlin on 9 April", n)
    assert v.skip_as_duplicate_of is None
    assert v.similar_to == n


def test_rephrase_with_same_tokens_is_skipped():
    n = Neighbour("aaaaaaaaaaaa", "The user lives in Berlin.", 0.97)
    assert verdict("the user LIVES in berlin", n).skip_as_duplicate_of == n
    assert verdict("The user, lives in: Berlin!!", n).skip_as_duplicate_of == n
    assert verdict("in Berlin the user lives", n).skip_as_duplicate_of == n


def test_subset_of_existing_adds_nothing():
    n = Neighbour("aaaaaaaaaaaa", "The user lives in Berlin since 2021.", 0.96)
    assert verdict("The user lives in Berlin.", n).skip_as_duplicate_of == n


@pytest.mark.parametrize(
    ("existing", "new"),
    [
        ("We deploy version 2.3.1 of the API.", "We deploy version 2.3.2 of the API."),
        ("We deploy v2.3 of the API.", "We deploy v2.3.1 of the API."),
        ("Meeting with Anna on Monday.", "Meeting with Boris on Monday."),
        ("The budget is 100 euros.", "The budget is 120 euros."),
    ],
)
def test_new_version_number_or_name_is_saved(existing, new):
    n = Neighbour("aaaaaaaaaaaa", existing, 0.99)
    v = verdict(new, n)
    assert v.skip_as_duplicate_of is None and v.similar_to == n


def test_skips_when_any_high_neighbour_covers_the_new_text():
    near = Neighbour("aaaaaaaaaaaa", "moved to Berlin on 3 March", 0.99)
    other = Neighbour("bbbbbbbbbbbb", "Moved to Berlin on 9 April.", 0.96)
    assert verdict("moved to berlin on 9 april", near, other).skip_as_duplicate_of == other


def test_similar_to_is_the_closest_neighbour():
    far = Neighbour("bbbbbbbbbbbb", "x", 0.85)
    near = Neighbour("aaaaaaaaaaaa", "y", 0.90)
    assert verdict("z", far, near).similar_to == near


def test_equal_similarity_ties_broken_by_ref():
    b = Neighbour("bbbbbbbbbbbb", "x", 0.9)
    a = Neighbour("aaaaaaaaaaaa", "y", 0.9)
    assert verdict("z", b, a).similar_to == a


def test_no_neighbours():
    assert verdict("anything") == DedupVerdict()


def test_adds_nothing():
    assert adds_nothing("Berlin", "moved to Berlin")
    assert not adds_nothing("moved to Berlin on 9 April", "moved to Berlin on 3 March")
    assert adds_nothing("Release v2.3.1", "release V2.3.1 shipped")
    assert not adds_nothing("Release v2.3.1", "release v2.3 shipped")
