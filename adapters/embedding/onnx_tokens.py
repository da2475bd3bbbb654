"""Which token states of a text late interaction keeps, as unit float32 rows.

[CLS], [SEP] and tokens without a letter or digit (punctuation) carry little of what a text
is about; for stored memories stopwords are dropped too (on LoCoMo: 22.8 rows per turn instead
of 49.5, with better recall than keeping every token). A query keeps its stopwords: they are
few, and "who" or "when" can steer which memory token a query token matches.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from tinycontext import native
from tinycontext.domain.text import STOPWORDS
from tinycontext.ports.token_embedder import MAX_TOKEN_ROWS, TokenRows

SPECIAL = frozenset({"[CLS]", "[SEP]", "[PAD]", "<s>", "</s>", "<pad>"})


@lru_cache(maxsize=65536)  # the vocabulary is ~30,000 word pieces; saves ask per token
def keep_token(token: str, drop_stopwords: bool) -> bool:
    if token in SPECIAL:
        return False
    if not any(ch.isalnum() for ch in token.removeprefix("##")):
        return False
    return not (drop_stopwords and token.lower() in STOPWORDS)


def content_token_rows(states: Any, tokens: Sequence[str], drop_stopwords: bool) -> TokenRows:
    """The kept tokens' states (the first when none is kept), L2-normalised, as bytes."""
    np = native.numpy()

    kept = [i for i, t in enumerate(tokens[: len(states)]) if keep_token(t, drop_stopwords)]
    rows = np.asarray(states[(kept or [0])[:MAX_TOKEN_ROWS]], dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return bytes((rows / np.maximum(norms, 1e-12)).astype("<f4").tobytes())
