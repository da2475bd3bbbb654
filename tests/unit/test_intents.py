"""Explicit capture rules (domain/intents.py): what a prompt asks to keep, and what it does not."""

from __future__ import annotations

import pytest

from tinycontext.domain.intents import EPISODIC, MAX_CAPTURES, PROFILE, Capture, explicit_captures


@pytest.mark.parametrize(("prompt", "expected"), [
    ("Remember that the staging database listens on port 5433.",
     [Capture("The staging database listens on port 5433.", EPISODIC)]),
    ("please remember: deploys happen on Tuesdays", [Capture("Deploys happen on Tuesdays.",
                                                             EPISODIC)]),
    ("Note that api.internal:8080 is the v2 endpoint. Now fix the failing test.",
     [Capture("Api.internal:8080 is the v2 endpoint.", EPISODIC)]),
    ("From now on, use pytest fixtures instead of setUp methods.",
     [Capture("From now on, use pytest fixtures instead of setUp methods.", PROFILE)]),
    ("Always run ruff before committing.", [Capture("Always run ruff before committing.",
                                                    PROFILE)]),
    ("never push to main directly!", [Capture("Never push to main directly.", PROFILE)]),
    ("My name is Ana Lopez", [Capture("The user's name is Ana Lopez.", PROFILE)]),
    ("hi, call me Marcell. Let's start.", [Capture("The user's name is Marcell.", PROFILE)]),
    ("I prefer tabs over spaces in Go code.",
     [Capture("The user prefers tabs over spaces in Go code.", PROFILE)]),
    ("Remember that I prefer short commit messages.",
     [Capture("The user prefers short commit messages.", PROFILE)]),
    ("Could you remember that the CI runner has 2 cores?",
     [Capture("The CI runner has 2 cores.", EPISODIC)]),
])
def test_explicit_intents_are_captured(prompt: str, expected: list[Capture]) -> None:
    assert explicit_captures(prompt) == expected


@pytest.mark.parametrize("prompt", [
    "run the tests",
    "Do you remember what we did yesterday?",
    "remember to run the migrations before the tests",
    "I don't remember that function's name, can you find it?",
    "Why does this always fail on CI?",
    "never mind, revert that",
    "Never again.",
    "What is my name?",
    "my name is not important here",
    "The function should always return a list.",
    "I always forget how to rebase interactively",
    "Is it true that I prefer tabs?",
    "```\n# remember that this is a comment in code\n```",
    "Fix the bug where `remember that` appears in the log",
    "> Remember that quoted text from an email is not mine",
    "remember that",
    "Always.",
    "",
])
def test_ordinary_prompts_capture_nothing(prompt: str) -> None:
    assert explicit_captures(prompt) == []


def test_several_intents_are_bounded_and_not_repeated() -> None:
    prompt = ("Remember that a is 1 here. Remember that a is 1 here. Note that b is 2 there. "
              "Always use uv run. Never use sudo pip.")
    found = explicit_captures(prompt)
    assert len(found) == MAX_CAPTURES
    assert found[0] == Capture("A is 1 here.", EPISODIC)
    assert len(set(found)) == len(found)


def test_overlong_fact_is_not_captured() -> None:
    assert explicit_captures("Remember that " + "word " * 200) == []
