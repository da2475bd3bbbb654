"""tinycontext.import_memories into a service the caller holds (their own ports), in batches,
with progress; config and service together are refused before anything is read."""

from __future__ import annotations

from pathlib import Path

import pytest

from tinycontext import TinyContextConfig, TinyContextError, build_service, import_memories
from tinycontext.testing import FixedClock, HashEmbedder, InMemoryStore, WordTokenizer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "importers"


def test_a_held_service_gets_the_import_in_batches_with_progress() -> None:
    store = InMemoryStore()
    service = build_service(TinyContextConfig(), store=store, embedder=HashEmbedder(),
                            tokenizer=WordTokenizer(), clock=FixedClock(), background=False)
    seen: list[tuple[int, int]] = []
    done = import_memories(str(FIXTURES / "chatgpt_conversations.json"), "chatgpt",
                           service=service, batch_size=1,
                           progress=lambda n, total: seen.append((n, total)))
    assert done["imported"] == 3
    assert service.list_page(limit=10).total_count == 3  # into the held service's store
    assert seen and seen[-1] == (3, 3)


def test_config_and_service_together_are_refused() -> None:
    service = build_service(TinyContextConfig(), store=InMemoryStore(), embedder=HashEmbedder(),
                            tokenizer=WordTokenizer(), clock=FixedClock(), background=False)
    with pytest.raises(TinyContextError) as caught:
        import_memories(str(FIXTURES / "chatgpt_conversations.json"), "chatgpt",
                        config=TinyContextConfig(), service=service)
    assert caught.value.code == "invalid_request"
    assert service.list_page(limit=10).total_count == 0
