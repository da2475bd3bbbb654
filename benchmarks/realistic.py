"""Conversational memory texts with a natural vocabulary, for store-size scaling runs.

The templated filler of synthetic.py repeats a few hundred words, so its keyword postings and
dense neighbourhoods do not grow like a real store's. Here a word-bigram chain learnt from the
LoCoMo dialog turns (read from the local data file, never stored in the repository) writes
new texts of 15-40 words: everyday wording with a vocabulary of thousands of words, no two
texts alike. Questions are LoCoMo's own. Deterministic for a seed.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

from benchmarks.datasets import load_locomo

MIN_WORDS, MAX_WORDS = 15, 40


class RealisticText:
    def __init__(self, data: Path) -> None:
        conversations = load_locomo(data)
        self._questions = [qa.question for c in conversations for qa in c.qas]
        self._next: dict[str, list[str]] = {}
        self._starts: list[str] = []
        for conv in conversations:
            for turn in conv.turns:
                words = turn.text.split()
                if len(words) < 2:
                    continue
                self._starts.append(words[0])
                for a, b in zip(words, words[1:], strict=False):
                    self._next.setdefault(a, []).append(b)

    def memory_texts(self, seed: int = 7, distinct: bool = True) -> Iterator[str]:
        """An endless, deterministic stream of texts of 15-40 words, distinct unless
        `distinct=False` (then nothing is remembered: a soak's own memory stays flat)."""
        rng = random.Random(seed)
        seen: set[str] = set()
        while True:
            target = rng.randint(MIN_WORDS, MAX_WORDS)
            word = rng.choice(self._starts)
            words = [word]
            while len(words) < target:
                followers = self._next.get(word)
                word = rng.choice(followers) if followers else rng.choice(self._starts)
                words.append(word)
            text = " ".join(words)
            if not distinct:
                yield text
            elif text not in seen:
                seen.add(text)
                yield text

    def questions(self, n: int, seed: int = 11) -> list[str]:
        rng = random.Random(seed)
        return [rng.choice(self._questions) for _ in range(n)]
