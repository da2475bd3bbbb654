"""recall_keyword_context_weight reaches the store the composition opens (SQLite here; the
store contract suite holds every store to the weight it is given)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tests.contract.store_support import day, mem, new
from tinycontext import TinyContextConfig
from tinycontext.domain.text import recall_terms
from tinycontext.entry.stores import open_store
from tinycontext.ports.store import Scope


def test_the_setting_weighs_context_words_in_the_opened_store(tmp_path: Path) -> None:
    first = mem(1, "Caroline adopted a puppy from the shelter.", created=day(1, 9))
    reply = mem(2, "His name is Max and he loves the beach.", created=day(1, 9))
    found = {}
    for weight in (0.0, 0.3):
        config = TinyContextConfig(memory_db_path=str(tmp_path / f"{weight}.db"),
                                   recall_keyword_context_weight=weight)
        store = open_store(config)
        store.add([new(first), replace(new(reply), context_id=first.id, context=first.content)])
        hits = store.keyword_search(recall_terms("What did Caroline adopt?"),
                                    Scope("episodic"), 10)
        found[weight] = {h.memory.content: h.score for h in hits}.get(reply.content, 0.0)
        store.close()
    assert found[0.0] == 0.0 < found[0.3]
