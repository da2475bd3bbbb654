"""tinycontext.testing.ablation: stemming off for an ablation run, and back on after it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tinycontext import TinyContextConfig, build_service
from tinycontext.domain.text import stem_groups, stemmed_terms
from tinycontext.testing import FixedClock, HashEmbedder, InMemoryStore, WordTokenizer
from tinycontext.testing.ablation import without_stemming
from tinycontext.testing.retrievers import recall_scope, retrievers_alone


def test_words_match_as_written_inside_and_stemmed_again_after() -> None:
    assert stemmed_terms("Running runners") == "run runner"
    with without_stemming():
        assert stemmed_terms("Running runners") == "running runners"
        assert stem_groups([["Runs"]]) == [["runs"]]
    assert stemmed_terms("Running runners") == "run runner"
    assert stem_groups([["Runs"]]) == [["run"]]


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_a_store_made_inside_finds_only_the_words_as_written(kind: str, tmp_path: Path) -> None:
    made = iter(range(3))

    def keyword_hits(query: str) -> list[str]:
        # A fresh store each time: its keyword index is built with the switch as it is then.
        config = TinyContextConfig(memory_db_path=str(tmp_path / f"{next(made)}.db"))
        service = build_service(config, store=InMemoryStore() if kind == "memory" else None,
                                embedder=HashEmbedder(), tokenizer=WordTokenizer(),
                                clock=FixedClock(), background=False)
        service.save([{"content": "She was running the marathon"}])
        found = retrievers_alone(service, query, recall_scope(None))
        service.close()
        return [hit.memory.content for hit in found.keyword]

    assert keyword_hits("runs") == ["She was running the marathon"]
    with without_stemming():
        assert keyword_hits("runs") == []
        assert keyword_hits("running") == ["She was running the marathon"]
