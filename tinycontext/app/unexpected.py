"""Logging an unexpected failure without what it may quote.

An exception's message can quote anything its raiser had at hand: a memory's text, a query,
a path with a user id in it (SPEC section 10: logs never carry those). What an operator needs
to find the bug is the exception's type and where it was raised, so that is all these
records keep: the types along the cause chain and the stack frames (file, line, function),
never a message and never a local variable.
"""

from __future__ import annotations

import logging
import traceback

MAX_CHAIN = 5  # causes followed; a longer (or cyclic) chain is cut


def describe(exc: BaseException) -> str:
    """`Type (caused by Type ...)` then one `file:line in function` per frame, innermost last."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and len(chain) < MAX_CHAIN and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    names = [type(e).__qualname__ for e in chain]
    head = names[0] + "".join(f" (caused by {n})" for n in names[1:])
    frames = traceback.extract_tb(exc.__traceback__)
    return head + "".join(f"\n  {f.filename}:{f.lineno} in {f.name}" for f in frames)


def log_unexpected(log: logging.Logger, what: str, exc: BaseException | None) -> None:
    """Log `what` (a fixed text: no content) with the exception's type and stack only."""
    if exc is None:
        log.error("%s", what)
        return
    log.error("%s: %s", what, describe(exc))
