"""Benchmark helpers: generated data is deterministic and duplicate-free; small utilities."""

from __future__ import annotations

import argparse

import pytest

from benchmarks._common import parse_sizes, render_table
from benchmarks.facts import ATTRIBUTES, hard_facts, plain_facts
from benchmarks.synthetic import FIRST as FILLER_FIRST
from benchmarks.synthetic import memory_texts, questions, take


def test_synthetic_memories_are_deterministic_distinct_and_sized() -> None:
    texts = take(memory_texts(7), 3000)
    assert texts == take(memory_texts(7), 3000)
    assert len(set(texts)) == len(texts)
    assert all(15 <= len(t.split()) <= 40 for t in texts)
    assert questions(5, seed=1) == questions(5, seed=1)


def test_plain_facts_are_distinct_with_distinct_questions() -> None:
    facts = plain_facts()
    assert len(facts) == 40 and plain_facts(5) == facts[:5]
    assert len({f.text for f in facts}) == len({f.question for f in facts}) == 40


def test_hard_facts_form_a_grid_of_confusables_with_updates() -> None:
    facts = hard_facts(12, seed=3)
    assert len(facts) == 12 * len(ATTRIBUTES)
    updated = [f for f in facts if f.old_text]
    assert len(updated) == 12 * sum(1 for a in ATTRIBUTES if a.update)
    for fact in updated:
        assert fact.old_text != fact.text and fact.value in fact.text


def test_planted_names_never_appear_in_filler() -> None:
    planted = {f.person.split()[0] for f in hard_facts(12, 3)}
    assert planted.isdisjoint(FILLER_FIRST)


def test_parse_sizes() -> None:
    assert parse_sizes("1000,100, 5k,100") == [100, 1000, 5000]
    with pytest.raises(argparse.ArgumentTypeError):
        parse_sizes(" , ")


def test_table_is_markdown() -> None:
    text = render_table(["a", "b"], [[1234, 0.5], [None, "x"]])
    assert text.splitlines() == ["| a     | b    |", "|-------|------|",
                                 "| 1,234 | 0.50 |", "| -     | x    |"]


def test_accuracy_planting_supersedes_and_never_returns_old_values() -> None:
    from benchmarks.benchmark_accuracy import ask, plant
    from benchmarks.metrics import Scoreboard
    from tests.fakes import FixedClock, HashEmbedder, InMemoryStore, WordTokenizer
    from tinycontext.config.engine import TinyContextConfig
    from tinycontext.entry.container import build_service

    service = build_service(
        TinyContextConfig(memory_db_path="/nonexistent/unused.db"),
        store=InMemoryStore(), embedder=HashEmbedder(), tokenizer=WordTokenizer(),
        clock=FixedClock(), background=False,
    )
    facts = hard_facts(2, seed=3)
    current, superseded, skipped = plant(service, facts)
    assert (len(current), len(superseded), skipped) == (20, 6, 0)
    assert sorted(current.values()) == list(range(20))
    board = Scoreboard()
    confusion = ask(service, facts, current, superseded, board, "hard")
    assert board.count("hard") == 20 and board.count("hard / updated") == 6
    assert confusion["superseded_returned"] == 0
    wrong = sum(confusion[k] for k in ("same_person", "same_attribute", "other_fact",
                                       "filler_memory"))
    assert wrong == round(20 * (1 - board.means("hard")["recall@1"]))
