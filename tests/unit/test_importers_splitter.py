"""The importers' splitter: pieces under the limit, at paragraph/sentence boundaries."""

from __future__ import annotations

from tinycontext.importers.splitter import split_text


def count(text: str) -> int:
    return len(text.split())


def test_short_text_is_one_piece() -> None:
    assert split_text("  one two three  ", 10, count) == ["one two three"]
    assert split_text("   ", 10, count) == []


def test_paragraphs_are_packed_under_the_limit() -> None:
    paragraphs = [" ".join(f"p{i}w{j}" for j in range(30)) for i in range(10)]
    pieces = split_text("\n\n".join(paragraphs), 100, count)
    assert all(count(p) <= 100 for p in pieces)
    assert len(pieces) == 4  # three paragraphs (90 words) fit in each piece
    assert pieces[0] == "\n\n".join(paragraphs[:3])


def test_a_code_block_stays_whole_when_it_fits() -> None:
    code = "```python\n" + "\n".join(f"x{i} = {i}" for i in range(20)) + "\n\n# gap\n```"
    prose = " ".join(f"w{i}" for i in range(45))
    pieces = split_text(f"{prose}\n\n{code}\n\n{prose}", 80, count)
    assert code in pieces
    assert all(count(p) <= 80 for p in pieces)


def test_long_paragraph_splits_at_sentences_then_words() -> None:
    sentence = " ".join(["word"] * 9) + " end."
    text = " ".join([sentence] * 10)
    pieces = split_text(text, 25, count)
    assert all(count(p) <= 25 for p in pieces)
    assert all(p.endswith("end.") for p in pieces)
    giant = " ".join(f"w{i}" for i in range(1000))  # no sentence end at all
    pieces = split_text(giant, 50, count)
    assert all(count(p) <= 50 for p in pieces)
    assert " ".join(pieces).split() == giant.split()


def test_ten_megabyte_message_is_split_losing_nothing() -> None:
    text = "\n\n".join(
        f"Paragraph {i} talks about topic {i % 97}. It has a second sentence." for i in
        range(160_000))
    assert len(text) > 10_000_000
    pieces = split_text(text, 8000, count)
    assert all(count(p) <= 8000 for p in pieces)
    assert "\n\n".join(pieces) == text


def test_unbroken_run_is_cut_by_characters() -> None:
    blob = "x" * 5000
    pieces = split_text(blob, 64, lambda t: len(t) // 4 + 1)
    assert all(len(p) // 4 + 1 <= 64 for p in pieces)
    assert "".join(pieces) == blob
