"""The tiktoken adapter counts texts of any length: tiktoken's own regex fails on a run of
about a million spaces (ValueError), which reached callers as an internal error."""

from __future__ import annotations

from tinycontext.adapters.embedding.tiktoken_tokenizer import PIECE_CHARS, TiktokenTokenizer, pieces


def test_a_million_spaces_are_counted():
    tokenizer = TiktokenTokenizer()
    assert tokenizer.count(" " * 1_000_000) > 0
    assert tokenizer.count("start" + " " * 1_000_000 + "end") > 2


def test_long_texts_are_counted_exactly_when_cut_at_line_breaks():
    tokenizer = TiktokenTokenizer()
    text = "The quick brown fox jumps over the lazy dog.\n" * 6000  # 270,000 characters
    parts = pieces(text)
    assert "".join(parts) == text and len(parts) > 1
    assert all(len(p) <= PIECE_CHARS and p.endswith("\n") for p in parts)
    direct = len(tokenizer._encoding().encode(text, disallowed_special=()))
    assert tokenizer.count(text) == direct


def test_pieces_without_any_break_are_cut_at_the_size():
    assert [len(p) for p in pieces("x" * 250, size=100)] == [100, 100, 50]
    assert pieces("ab cd", size=100) == ["ab cd"]
