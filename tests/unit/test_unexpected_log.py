"""Unexpected failures are logged by type and place, never by message (app/unexpected.py)."""

from __future__ import annotations

import logging

import pytest

from tinycontext.app.unexpected import MAX_CHAIN, describe, log_unexpected

SECRET = "the user's private note about Lisbon"


def inner() -> None:
    raise KeyError(SECRET)


def outer() -> None:
    try:
        inner()
    except KeyError as exc:
        raise RuntimeError(f"could not save {SECRET}") from exc


def test_describe_keeps_types_and_frames_only() -> None:
    with pytest.raises(RuntimeError) as caught:
        outer()
    text = describe(caught.value)
    assert text.splitlines()[0] == "RuntimeError (caused by KeyError)"
    assert "in outer" in text and "test_unexpected_log.py:" in text
    assert SECRET not in text and "Lisbon" not in text


def test_a_long_or_cyclic_chain_is_cut() -> None:
    first = ValueError("a")
    second = TypeError("b")
    first.__cause__, second.__cause__ = second, first  # a cycle
    assert describe(first).splitlines()[0] == "ValueError (caused by TypeError)"
    errors = [OSError(str(i)) for i in range(MAX_CHAIN + 3)]
    for a, b in zip(errors, errors[1:], strict=False):
        a.__cause__ = b
    assert describe(errors[0]).count("caused by") == MAX_CHAIN - 1


def test_log_unexpected_writes_one_error_record(caplog: pytest.LogCaptureFixture) -> None:
    log = logging.getLogger("tinycontext.test")
    with pytest.raises(RuntimeError) as caught:
        outer()
    with caplog.at_level(logging.ERROR, logger="tinycontext.test"):
        log_unexpected(log, "saving failed", caught.value)
        log_unexpected(log, "closing failed", None)
    assert [r.levelno for r in caplog.records] == [logging.ERROR, logging.ERROR]
    assert caplog.records[0].exc_info is None  # no traceback with messages attached
    assert caplog.records[0].getMessage().startswith("saving failed: RuntimeError")
    assert SECRET not in caplog.text
