"""The tokenizer remembers recent counts (recall re-counts the same escaped contents), within
a fixed number of entries and without keeping the texts."""

from __future__ import annotations

from tinycontext.adapters.embedding.tiktoken_tokenizer import COUNT_CACHE_SIZE, TiktokenTokenizer


def test_a_repeated_text_is_counted_once() -> None:
    tok = TiktokenTokenizer()
    encodes = []
    real = tok._count

    def counting(text: str) -> int:
        encodes.append(len(text))
        return real(text)

    tok._count = counting  # type: ignore[method-assign]
    text = "Caroline &apos;s support group met on Tuesday &amp; she liked it"
    first = tok.count(text)
    assert tok.count(text) == first == real(text)
    assert len(encodes) == 1
    assert tok.count(text + "!") == real(text + "!")  # another text is counted for itself
    assert len(encodes) == 2
    assert all(isinstance(key, bytes) and len(key) == 16 for key in tok._counts)


def test_the_cache_keeps_at_most_its_size_dropping_the_oldest() -> None:
    assert COUNT_CACHE_SIZE == 1024
    tok = TiktokenTokenizer(cache_size=3)
    counts = [tok.count(f"memory number {i} " * (i + 1)) for i in range(5)]
    assert len(tok._counts) == 3
    assert counts == [TiktokenTokenizer(cache_size=0).count(f"memory number {i} " * (i + 1))
                      for i in range(5)]
    seen = []
    real = tok._count
    tok._count = lambda text: seen.append(text) or real(text)  # type: ignore[method-assign]
    tok.count("memory number 4 " * 5)  # newest: still known
    assert seen == []
    tok.count("memory number 0 ")  # oldest: dropped, counted again
    assert seen == ["memory number 0 "]
    assert len(tok._counts) == 3
