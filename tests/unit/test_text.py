"""Keyword normalisation (domain/text.py): CJK, emoji, query terms, informative tokens."""

from __future__ import annotations

from tinycontext.domain.text import (
    informative_tokens,
    keyword_groups,
    recall_terms,
    searchable_text,
)


def test_searchable_text_spaces_cjk_characters():
    assert searchable_text("我爱北京").split() == ["我", "爱", "北", "京"]
    assert searchable_text("東京タワー").split() == ["東", "京", "タ", "ワ", "ー"]
    assert searchable_text("한국어").split() == ["한", "국", "어"]


def test_searchable_text_turns_emoji_into_words():
    assert searchable_text("I love 🍕!").split() == ["I", "love", "emoji1f355", "!"]
    assert searchable_text("😀").strip() == "emoji1f600"


def test_searchable_text_keeps_latin_and_applies_nfkc():
    assert searchable_text("Café ﬁle") == "Café file"  # NFKC folds the ligature


def test_keyword_groups_basic_words_and_punctuation():
    assert keyword_groups("Hello, World!") == [["hello"], ["world"]]
    assert keyword_groups("don't") == [["don", "t"]]  # a phrase, as FTS5 splits it
    assert keyword_groups("v2.3.1") == [["v2", "3", "1"]]
    assert keyword_groups("snake_case") == [["snake", "case"]]


def test_keyword_groups_drop_pure_punctuation():
    assert keyword_groups('*** " : - ^ (') == []
    assert keyword_groups("") == []


def test_keyword_groups_cjk_and_emoji_match_index_tokens():
    groups = keyword_groups("北京 🍕")
    tokens = [t for g in groups for t in g]
    assert tokens == ["北", "京", "emoji1f355"]


def test_keyword_groups_fts_operators_become_plain_words():
    assert keyword_groups("a AND b OR NEAR(c)") == [["a"], ["and"], ["b"], ["or"], ["near", "c"]]


def test_recall_terms_drop_stopwords():
    assert recall_terms("What is the capital of France?") == [["capital"], ["france"]]


def test_recall_terms_keep_stopwords_when_nothing_else_is_left():
    assert recall_terms("what is the") == [["what"], ["is"], ["the"]]


def test_recall_terms_deduplicate_in_order():
    assert recall_terms("python Python PYTHON rust python") == [["python"], ["rust"]]
    assert recall_terms("the the") == [["the"]]


def test_recall_terms_keep_multi_token_groups_with_stopword_parts():
    # "it's" is a phrase group [it, s], not a lone stopword.
    assert recall_terms("it's") == [["it", "s"]]


def test_informative_tokens_versions():
    assert informative_tokens("Upgraded to v2.3.1.") == frozenset(
        {"upgraded", "to", "v2.3.1", "v2", "3", "1"}
    )


def test_informative_tokens_dates():
    assert informative_tokens("3 March 2026") == frozenset({"3", "march", "2026"})
    assert informative_tokens("On 2026-03-03!") == frozenset(
        {"on", "2026-03-03", "2026", "03"}
    )


def test_informative_tokens_case_and_punctuation_insensitive():
    assert informative_tokens("The USER lives in Berlin.") == informative_tokens(
        "the user lives in berlin"
    )


def test_informative_tokens_cjk_and_emoji():
    assert informative_tokens("北京 🍕") == frozenset({"北", "京", "emoji1f355"})


def test_keyword_groups_cjk_words_are_adjacent_character_phrases():
    assert keyword_groups("北京 天气") == [["北", "京"], ["天", "气"]]
    # A CJK run without spaces becomes overlapping two-character phrases.
    assert keyword_groups("我爱北京") == [["我", "爱"], ["爱", "北"], ["北", "京"]]
    assert keyword_groups("京") == [["京"]]
    assert keyword_groups("Tokyo東京タワー") == [["tokyo"], ["東", "京"], ["京", "タ"],
                                               ["タ", "ワ"], ["ワ", "ー"]]
