"""Ids, refs, timestamps and input validation (domain/memory.py)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from tinycontext.domain.errors import (
    EmptyMemoryError,
    InvalidMemoryKindError,
    InvalidRequestError,
    MemoryNotFoundError,
)
from tinycontext.domain.memory import (
    Memory,
    check_kind,
    check_session_id,
    clean_content,
    format_timestamp,
    format_timestamp_ceil,
    parse_instant,
    parse_memory_key,
    ref_of,
)

ID = "3f2a9c1e-7b4d-4e8f-9a0b-1c2d3e4f5a6b"


def test_ref_of():
    assert ref_of(ID) == "3f2a9c1e7b4d"
    assert ref_of(ID.upper()) == "3f2a9c1e7b4d"


def test_memory_ref_and_live():
    m = Memory(ID, "x", "episodic", None, "2026-07-31T10:15:00Z", 1)
    assert m.ref == "3f2a9c1e7b4d" and m.live
    assert not Memory(ID, "x", "episodic", None, "t", 1, superseded_by="other").live


def test_format_timestamp():
    assert format_timestamp(datetime(2026, 7, 31, 10, 15, 7, 999999, tzinfo=UTC)) == (
        "2026-07-31T10:15:07Z"
    )
    plus2 = timezone(timedelta(hours=2))
    assert format_timestamp(datetime(2026, 1, 1, 1, 0, tzinfo=plus2)) == "2025-12-31T23:00:00Z"
    assert format_timestamp(datetime(2026, 7, 31, 10, 15)) == "2026-07-31T10:15:00Z"  # naive = UTC


def test_format_timestamp_ceil_rounds_a_fraction_up():
    assert format_timestamp_ceil(datetime(2026, 7, 31, 10, 15, 7, 1, tzinfo=UTC)) == (
        "2026-07-31T10:15:08Z"
    )
    # A whole second stays; the carry crosses minute, day and year; offsets go to UTC first.
    assert format_timestamp_ceil(datetime(2026, 7, 31, 10, 15, 7)) == "2026-07-31T10:15:07Z"
    last = datetime(2026, 12, 31, 23, 59, 59, 500000, tzinfo=UTC)
    assert format_timestamp_ceil(last) == "2027-01-01T00:00:00Z"
    plus2 = timezone(timedelta(hours=2))
    assert format_timestamp_ceil(datetime(2026, 1, 1, 1, 0, 0, 5, tzinfo=plus2)) == (
        "2025-12-31T23:00:01Z"
    )


# -- parse_memory_key --------------------------------------------------------------------------
def test_parse_memory_key_full_id():
    key = parse_memory_key(ID)
    assert (key.value, key.is_ref) == (ID, False)


def test_parse_memory_key_ref_and_upper_case():
    assert parse_memory_key("3f2a9c1e7b4d").is_ref
    key = parse_memory_key("  3F2A9C1E7B4D ")
    assert (key.value, key.is_ref) == ("3f2a9c1e7b4d", True)
    assert parse_memory_key(ID.upper()).value == ID


@pytest.mark.parametrize("blank", ["", "   ", "\n\t"])
def test_parse_memory_key_blank(blank):
    with pytest.raises(EmptyMemoryError):
        parse_memory_key(blank)


@pytest.mark.parametrize("garbage", ["nope", "3f2a9c1e7b4", "3f2a9c1e7b4dz", "g" * 12, ID + "0",
                                     "'; DROP TABLE memories; --"])
def test_parse_memory_key_garbage_is_not_found(garbage):
    with pytest.raises(MemoryNotFoundError):
        parse_memory_key(garbage)


def test_parse_memory_key_non_string():
    with pytest.raises(InvalidRequestError):
        parse_memory_key(12)


# -- clean_content / check_kind / check_session_id ------------------------------------------
def test_clean_content_strips():
    assert clean_content("  fact \n") == "fact"


@pytest.mark.parametrize("blank", ["", "  ", "\n"])
def test_clean_content_blank(blank):
    with pytest.raises(EmptyMemoryError):
        clean_content(blank)


@pytest.mark.parametrize("value", [None, 5, b"bytes", ["x"]])
def test_clean_content_non_string(value):
    with pytest.raises(InvalidRequestError):
        clean_content(value)


def test_clean_content_lone_surrogate():
    with pytest.raises(InvalidRequestError, match="surrogate"):
        clean_content("bad \ud800 text")


@pytest.mark.parametrize(("kind", "expected"), [(None, "episodic"), ("episodic", "episodic"),
                                                ("profile", "profile"), (" Profile ", "profile")])
def test_check_kind_valid(kind, expected):
    assert check_kind(kind) == expected


@pytest.mark.parametrize("kind", ["", "semantic", "profiles", 1, ["profile"]])
def test_check_kind_invalid(kind):
    with pytest.raises(InvalidMemoryKindError):
        check_kind(kind)


def test_check_session_id():
    assert check_session_id(None) is None
    assert check_session_id("   ") is None
    assert check_session_id(" project-a ") == "project-a"
    assert check_session_id("s" * 200) == "s" * 200


@pytest.mark.parametrize("bad", ["s" * 201, "a\nb", "tab\there", 7, "x\ud800"])
def test_check_session_id_invalid(bad):
    with pytest.raises(InvalidRequestError):
        check_session_id(bad)


# -- parse_instant ---------------------------------------------------------------------------
def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def test_parse_instant_none():
    assert parse_instant(None, field="since") is None


def test_parse_instant_date_start_and_until_whole_day():
    assert parse_instant("2026-07-31", field="since") == utc(2026, 7, 31)
    assert parse_instant("2026-07-31", field="until", end_of_day=True) == utc(
        2026, 7, 31, 23, 59, 59, 999999
    )
    assert parse_instant(date(2026, 7, 31), field="until", end_of_day=True) == utc(
        2026, 7, 31, 23, 59, 59, 999999
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-07-31T10:15:00Z", utc(2026, 7, 31, 10, 15)),
        ("2026-07-31T10:15:00z", utc(2026, 7, 31, 10, 15)),
        ("2026-07-31T10:15:00+02:00", utc(2026, 7, 31, 8, 15)),
        ("2026-07-31T01:00:00-03:30", utc(2026, 7, 31, 4, 30)),
        ("2026-07-31T10:15:00", utc(2026, 7, 31, 10, 15)),  # naive taken as UTC
    ],
)
def test_parse_instant_datetimes(text, expected):
    got = parse_instant(text, field="since")
    assert got == expected and got.tzinfo is not None and got.utcoffset() == timedelta(0)


def test_parse_instant_datetime_until_is_not_widened():
    assert parse_instant("2026-07-31T10:15:00Z", field="until", end_of_day=True) == utc(
        2026, 7, 31, 10, 15
    )


def test_parse_instant_datetime_object():
    plus2 = timezone(timedelta(hours=2))
    assert parse_instant(datetime(2026, 7, 31, 12, tzinfo=plus2), field="x") == utc(2026, 7, 31, 10)


@pytest.mark.parametrize("bad", ["yesterday", "2026-13-01", "2026-02-30", "31/07/2026",
                                 "2026-07-31T25:00:00", "   ", 20260731, ["2026-07-31"]])
def test_parse_instant_malformed(bad):
    with pytest.raises(InvalidRequestError) as info:
        parse_instant(bad, field="since")
    assert info.value.code == "invalid_request"
    assert "since" in info.value.message


@pytest.mark.parametrize("text", ["20260731", "2026-W31-5"])
def test_parse_instant_other_iso_dates_until_covers_whole_day(text):
    assert parse_instant(text, field="until", end_of_day=True) == utc(
        2026, 7, 31, 23, 59, 59, 999999
    )
    assert parse_instant(text, field="since") == utc(2026, 7, 31)


def test_timestamps_before_the_year_1000_keep_four_digits() -> None:
    # glibc's strftime writes the year 14 as "14", which parse_instant (and every ISO-8601
    # reader) refuses: a recall with since=0014-11-24 failed with invalid_request.
    from datetime import UTC, datetime

    from tinycontext.domain.filters import build_filter
    from tinycontext.domain.memory import format_timestamp

    assert format_timestamp(datetime(14, 11, 24, 3, 4, 5, tzinfo=UTC)) == "0014-11-24T03:04:05Z"
    assert build_filter(since="0014-11-24", until="0621-03-08").since == "0014-11-24T00:00:00Z"
