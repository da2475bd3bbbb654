"""Range checks for the numbers callers pass, and the size limit of one memory.

Numbers end up as 64-bit integers in SQLite and PostgreSQL, and JSON clients written in
JavaScript (or reading JSON numbers as doubles) lose whole numbers past 2**53. Anything larger
is refused here, in one place, so every transport answers `invalid_request` instead of an
overflow deep in a driver. Huge values are never formatted into messages (Python refuses to
print ints of more than 4300 digits).
"""

from __future__ import annotations

from .errors import InvalidRequestError, MemoryTooLargeError, RecallBudgetError

# The largest whole number every JSON client represents exactly (JavaScript's
# Number.MAX_SAFE_INTEGER): well inside 64 bits, and a schema bound no double rounds away.
MAX_INTEGER = 2**53 - 1
MAX_ITEMS_PER_SAVE = 1000
MAX_QUERY_CHARS = 4000
# Content over this many characters per allowed token is refused before it is counted:
# counting a few megabytes costs seconds, and tiktoken's regex gives up on whitespace runs of
# about a million characters. Real text averages 3-5 characters per o200k_base token; 32
# leaves room for padded tables and code, so only pathological input meets this bound.
CHARS_PER_TOKEN_BOUND = 32


def whole_number(value: object, field: str, *, default: int, minimum: int) -> int:
    """`value` as an int in [minimum, MAX_INTEGER]; None gives `default`.

    Below the minimum is `recall_budget` (the budget and paging rule of the error table);
    not a whole number or past 64 bits is `invalid_request`.
    """
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidRequestError(f"{field} must be a whole number.")
    if value < minimum:
        floor = "0 or more" if minimum == 0 else f"at least {minimum}"
        raise RecallBudgetError(f"{field} must be {floor}.")
    if value > MAX_INTEGER:
        raise InvalidRequestError(
            f"{field} must be at most {MAX_INTEGER} (2**53 - 1, the largest whole number "
            "every JSON client represents exactly); pass a smaller number."
        )
    return value


def max_content_chars(max_tokens: int) -> int:
    """The character bound checked before counting the tokens of a memory's content."""
    return max_tokens * CHARS_PER_TOKEN_BOUND


def _too_large(what: str, size: str, max_tokens: int) -> MemoryTooLargeError:
    return MemoryTooLargeError(
        f"{what} is {size}, over the limit of {max_tokens:,} tokens per memory "
        "(max_memory_tokens). Split it into smaller memories, one fact or topic each, and save "
        "them separately."
    )


def check_length(what: str, text: str, max_tokens: int) -> None:
    """The cheap check: refuse content far too long to be within `max_tokens`."""
    bound = max_content_chars(max_tokens)
    if len(text) > bound:
        raise _too_large(what, f"{len(text):,} characters (more than {bound:,})", max_tokens)


def check_tokens(what: str, tokens: int, max_tokens: int) -> None:
    """The exact check, once the content's tokens are counted."""
    if tokens > max_tokens:
        raise _too_large(what, f"{tokens:,} tokens", max_tokens)
