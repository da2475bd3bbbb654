"""Parts of recall that have no setting, switched off for an ablation run.

The keyword index is built with stemming, so a setting would have to rebuild every store's
index when changed; an ablation only needs it off in one process, for a store made for the
run:

    from tinycontext.testing.ablation import without_stemming

    with without_stemming():
        service = build_service(TinyContextConfig(memory_db_path=str(scratch)))
        ...  # save and recall: words match as written (folded, never stemmed)

The switch is the whole process's while the block runs. A store saved to inside it holds
unstemmed words in its keyword index: use a throwaway store, never one that is used without
the switch.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from tinycontext.domain import stemming, text


def _as_written(word: str) -> str:
    return word


def _forget_stems() -> None:
    # Words already stemmed are cached; entering or leaving the switch must not reuse them.
    text.stemmed_terms.cache_clear()
    text._recall_word.cache_clear()


@contextmanager
def without_stemming() -> Iterator[None]:
    """Recall's keyword side without stemming while the block runs: saves index each word
    folded (case and accents) but not stemmed, and queries look the words up the same way."""
    # The text module's own name for the stemmer: every stem of a save and a query goes
    # through it.
    vars(text)["stem"] = _as_written
    _forget_stems()
    try:
        yield
    finally:
        vars(text)["stem"] = stemming.stem
        _forget_stems()
