"""Domain input rules (issue 13 items 2, 7, 8): integer ranges, invisible and control
characters in content, the size limit of one memory."""

from __future__ import annotations

import pytest

from tinycontext.domain.errors import (
    EmptyMemoryError,
    InvalidRequestError,
    MemoryTooLargeError,
    RecallBudgetError,
)
from tinycontext.domain.limits import (
    MAX_INTEGER,
    check_length,
    check_tokens,
    max_content_chars,
    whole_number,
)
from tinycontext.domain.listing import build_list_query
from tinycontext.domain.memory import (
    check_session_id,
    clean_content,
    has_visible,
    parse_instant,
)


# -- whole numbers ---------------------------------------------------------------------------
@pytest.mark.parametrize("value", [MAX_INTEGER + 1, 2**63, 2**64, 10**5000],
                         ids=["2**53", "2**63", "2**64", "5001 digits"])
def test_numbers_past_the_bound_are_invalid_request(value):
    with pytest.raises(InvalidRequestError) as info:
        whole_number(value, "offset", default=0, minimum=0)
    assert info.value.code == "invalid_request"
    assert info.value.message.startswith("offset must be at most 9007199254740991")


def test_numbers_inside_the_bound_pass_through():
    assert whole_number(MAX_INTEGER, "top_k", default=10, minimum=1) == MAX_INTEGER
    assert whole_number(None, "top_k", default=10, minimum=1) == 10
    assert whole_number(0, "offset", default=0, minimum=0) == 0


@pytest.mark.parametrize(("value", "minimum", "message"), [
    (0, 1, "limit must be at least 1."), (-1, 0, "limit must be 0 or more."),
    (-(2**70), 1, "limit must be at least 1."),
])
def test_numbers_below_the_minimum_are_recall_budget(value, minimum, message):
    with pytest.raises(RecallBudgetError) as info:
        whole_number(value, "limit", default=20, minimum=minimum)
    assert info.value.message == message


@pytest.mark.parametrize("value", [True, False, "5", 5.0, [1]])
def test_non_integers_are_invalid_request(value):
    with pytest.raises(InvalidRequestError, match="whole number"):
        whole_number(value, "top_k", default=10, minimum=1)


@pytest.mark.parametrize("field", ["limit", "offset"])
def test_list_paging_beyond_64_bits_is_invalid_request(field):
    args = {"limit": None, "offset": None, field: 2**64}
    with pytest.raises(InvalidRequestError, match=f"^{field} must be at most"):
        build_list_query(None, None, None, None, args["limit"], args["offset"], None, None)


@pytest.mark.parametrize("value", ["0001-01-01T00:00:00+05:00", "9999-12-31T23:00:00-05:00"])
def test_dates_that_leave_the_calendar_in_utc_are_invalid_request(value):
    with pytest.raises(InvalidRequestError, match="out of range"):
        parse_instant(value, field="since")


FAMILY = "family \U0001f468\u200d\U0001f469\u200d\U0001f467"


# -- invisible and control characters --------------------------------------------------------
@pytest.mark.parametrize("content", [
    "\x00", "\u200b", "\u200c\u200d", "\u2060", "\ufeff", "\x00\u200b \ufeff\n\t",
    "\u00ad", "\u180e", "\u2800", "\u3164", "\u202e\u2066", "\ufe0f", "\U000e0067\U000e007f",
    "\x1b\x7f\x85\x9f", " \u3000\u2028\u00a0 ",
])
def test_content_of_only_invisible_characters_is_empty_memory(content):
    assert not has_visible(content)
    with pytest.raises(EmptyMemoryError) as info:
        clean_content(content)
    assert info.value.code == "empty_memory"
    assert "nothing visible" in info.value.message


@pytest.mark.parametrize(("raw", "stored"), [
    ("a\x00b", "ab"),  # NUL removed
    ("tab\tline\nreturn\r\nend", "tab\tline\nreturn\r\nend"),  # kept
    ("a\x0bb\x0cc\x1cd\x1de\x1ef\x85g", "a\nb\nc\nd\ne\nf\ng"),  # line-breaking controls
    ("\x1b[31mred\x1b[0m", "[31mred[0m"),  # ESC and the other controls removed
    ("del\x7fete \x80c1\x9f", "delete c1"),
    ("\ufeff\u200b  fact \u2060\u200d", "fact"),  # invisible edges stripped
    ("zero\u200bwidth inside", "zero\u200bwidth inside"),  # kept inside the text
    (FAMILY, FAMILY),  # zero-width joiners inside an emoji sequence
    ("love \u2764\ufe0f", "love \u2764\ufe0f"),  # trailing variation selector kept
    ("\x00\x00 The user is Ada. \x00", "The user is Ada."),
])
def test_content_controls_are_removed_and_edges_stripped(raw, stored):
    assert clean_content(raw) == stored


def test_session_ids_refuse_control_characters_anywhere_and_length_before_stripping():
    assert check_session_id(" work ") == "work"
    for bad in ("work\n", "\x7fwork", "wo\x85rk", " " * 150 + "w" * 51):
        with pytest.raises(InvalidRequestError):
            check_session_id(bad)


# -- size of one memory ----------------------------------------------------------------------
def test_the_character_bound_comes_from_the_token_limit():
    assert max_content_chars(8000) == 256_000
    check_length("content", "x" * 256_000, 8000)
    with pytest.raises(MemoryTooLargeError) as info:
        check_length("memories[2].content", "x" * 256_001, 8000)
    assert info.value.code == "memory_too_large"
    assert info.value.message == (
        "memories[2].content is 256,001 characters (more than 256,000), over the limit of "
        "8,000 tokens per memory (max_memory_tokens). Split it into smaller memories, one fact "
        "or topic each, and save them separately."
    )


def test_the_token_limit_is_inclusive():
    check_tokens("content", 8000, 8000)
    with pytest.raises(MemoryTooLargeError, match="^content is 8,001 tokens, over the limit"):
        check_tokens("content", 8001, 8000)


def test_max_memory_tokens_is_a_setting_with_an_environment_variable(tmp_path):
    from tinycontext.config.engine import ConfigError, TinyContextConfig
    from tinycontext.config.settings import load_config

    assert TinyContextConfig(memory_db_path=str(tmp_path / "m.db")).max_memory_tokens == 8000
    env = {"TINYCONTEXT_MEMORY_DB_PATH": str(tmp_path / "m.db"),
           "TINYCONTEXT_MAX_MEMORY_TOKENS": "1200"}
    assert load_config(env, config_file=tmp_path / "none.json").max_memory_tokens == 1200
    with pytest.raises(ConfigError, match="max_memory_tokens"):
        load_config({**env, "TINYCONTEXT_MAX_MEMORY_TOKENS": "0"}, config_file=tmp_path / "n.json")
