"""The service applies the input rules on every way in: save, update, recall, list (issue 13
items 2, 7, 8). Bad input is refused with its code and nothing stored changes."""

from __future__ import annotations

import pytest

from tests.fakes import FixedClock, HashEmbedder, InMemoryStore, WordTokenizer
from tests.unit.support import save
from tinycontext.app.service import MemoryService
from tinycontext.config.engine import TinyContextConfig
from tinycontext.domain.errors import TinyContextError


class CountingTokenizer(WordTokenizer):
    """WordTokenizer that remembers the length of every text it was asked to count."""

    def __init__(self) -> None:
        self.lengths: list[int] = []

    def count(self, text: str) -> int:
        self.lengths.append(len(text))
        return super().count(text)


@pytest.fixture
def limited(tmp_path):
    tokenizer = CountingTokenizer()
    service = MemoryService(
        InMemoryStore(), HashEmbedder(), tokenizer, FixedClock(),
        TinyContextConfig(memory_db_path=str(tmp_path / "x.db"), max_memory_tokens=10,
                          save_length_notice_tokens=5),
        background=False,
    )
    service.tokenizer_lengths = tokenizer.lengths  # type: ignore[attr-defined]
    return service


def _code(call) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(TinyContextError) as info:
        call()
    return info.value.code


def test_content_over_max_memory_tokens_is_refused_and_nothing_is_saved(limited):
    eleven = " ".join(["word"] * 11)
    with pytest.raises(TinyContextError) as info:
        limited.save([{"content": "fits"}, {"content": eleven}])
    assert info.value.code == "memory_too_large"
    assert info.value.message.startswith("memories[1].content is 11 tokens, over the limit of 10")
    assert "Split it into smaller memories" in info.value.message
    assert limited.list_page().to_dict()["total_count"] == 0


def test_content_at_the_limit_is_saved_with_the_soft_notice(limited):
    [entry] = limited.save([{"content": " ".join(["word"] * 10)}]).to_dict()["saved"]
    assert entry["content_tokens"] == 10 and "consider splitting" in entry["notice"]


def test_huge_content_is_refused_without_counting_its_tokens(limited):
    huge = "x" * 4_000_000
    assert _code(lambda: limited.save([{"content": huge}]).to_dict()) == "memory_too_large"
    [saved] = save(limited, "A short fact.")
    assert _code(lambda: limited.update(saved["id"], huge).to_dict()) == "memory_too_large"
    assert max(limited.tokenizer_lengths) < 1000  # the 4 MB text was never tokenized
    assert limited.detail(saved["id"]).to_dict()["superseded_by"] is None


def test_update_refuses_content_over_the_limit(limited):
    [saved] = save(limited, "A short fact.")
    code = _code(lambda: limited.update(saved["ref"], " ".join(["w"] * 11)).to_dict())
    assert code == "memory_too_large"
    assert limited.detail(saved["id"]).to_dict()["content"] == "A short fact."


@pytest.mark.parametrize("content", ["\x00", "\u200b\u200d", "\ufeff", " \u2060\x00\n"])
def test_invisible_content_is_empty_memory_on_save_and_update(svc, content):
    assert _code(lambda: svc.save([{"content": content}]).to_dict()) == "empty_memory"
    [saved] = save(svc, "Visible fact.")
    assert _code(lambda: svc.update(saved["id"], content).to_dict()) == "empty_memory"
    assert svc.list_page().to_dict()["total_count"] == 1


def test_control_characters_are_removed_the_same_way_on_save_and_update(svc):
    [saved] = save(svc, "\ufeffThe build\x00 uses\x1b Make.\x0cDone.\x00")
    assert svc.detail(saved["id"]).to_dict()["content"] == "The build uses Make.\nDone."
    updated = svc.update(saved["id"], "\u200bThe build\x00 uses Ninja.\x85Done.").to_dict()
    assert svc.detail(updated["id"]).to_dict()["content"] == "The build uses Ninja.\nDone."


def test_an_invisible_query_asks_for_recent_memories(svc):
    save(svc, "Only fact.")
    result = svc.recall("\u200b\ufeff").to_dict()
    assert result["mode"] == "recent" and len(result["memories"]) == 1


@pytest.mark.parametrize("call", [
    lambda s: s.recall("fact", top_k=2**63).to_dict(),
    lambda s: s.recall(top_k=2**64).to_dict(),
    lambda s: s.recall("fact", max_tokens=2**64).to_dict(),
    lambda s: s.list_page(offset=2**63).to_dict(),
    lambda s: s.list_page(limit=2**64).to_dict(),
    lambda s: s.list_page(offset=2**53).to_dict(),
], ids=["top_k", "recent top_k", "max_tokens", "offset", "limit", "offset 2**53"])
def test_numbers_beyond_the_bound_are_invalid_request(svc, call):
    save(svc, "Only fact.")
    assert _code(lambda: call(svc)) == "invalid_request"


def test_the_largest_accepted_numbers_work(svc):
    save(svc, "Only fact.")
    big = 2**53 - 1
    assert svc.list_page(offset=big, limit=big).to_dict()["memories"] == []
    assert len(svc.recall("fact", top_k=big, max_tokens=big).to_dict()["memories"]) == 1
    assert len(svc.recall(top_k=big).to_dict()["memories"]) == 1
