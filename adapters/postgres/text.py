"""Text-search values for the PostgreSQL store: tsvector and tsquery literals built in Python.

The keyword index holds exactly the tokens the SQLite store's FTS5 index holds: the memory is
rewritten with `searchable_text` (CJK characters spaced, emoji as words), split into runs of
letters and digits, case- and accent-folded. We build the tsvector literal ourselves instead
of calling `to_tsvector`: PostgreSQL's parser would keep `build.gradle` or `3.14` as one token,
fold nothing outside its locale and stem under most configurations, while we need exact tokens
(`E4711`), no stemming and no stopwords (the semantics of the 'simple' configuration) with the
same token boundaries as every other store. A tsquery literal is input verbatim by `::tsquery`,
so user text never reaches a parser: tokens hold only letters and digits and are quoted.

Every lexeme starts with a short tag of the tenant key: one GIN index serves every tenant, and
a word common in one tenant's memories never lengthens another tenant's posting lists.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from tinycontext.domain.context import KEYWORD_CONTEXT_WEIGHT
from tinycontext.domain.text import fold as fold_word
from tinycontext.domain.text import keyword_groups, searchable_text, stemmed_terms

MAX_POSITION = 16383  # tsvector positions are 14 bits
MAX_POSITIONS_PER_LEXEME = 255
MAX_TOKEN_CHARS = 200  # longer "words" are blobs (hashes, base64); matched on their head
MAX_VECTOR_BYTES = 900_000  # tsvector values are limited to 1 MB


def fold(token: str) -> str:
    """domain.text.fold (FTS5's unicode61 folding), cut to MAX_TOKEN_CHARS."""
    return fold_word(token)[:MAX_TOKEN_CHARS]


def tenant_tag(tenant: str) -> str:
    """Lexeme prefix of one tenant: 8 hex characters and a colon (tokens never hold colons)."""
    return hashlib.sha256(tenant.encode("utf-8")).hexdigest()[:8] + ":"


def document_tokens(content: str) -> list[str]:
    """The folded tokens of a memory in order, as the keyword index sees them."""
    folded = (fold(t) for group in keyword_groups(searchable_text(content)) for t in group)
    return [t for t in folded if t]


def _quote(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector_literal(content: str, tag: str) -> str:
    """A tsvector literal of the memory's tokens (tagged) with their positions."""
    tokens = document_tokens(content)
    return _literal([(i, t, "") for i, t in enumerate(tokens[:MAX_POSITION], start=1)], tag)


def _literal(numbered: Sequence[tuple[int, str, str]], tag: str) -> str:
    """tsvector text of (position, token, weight letter) triples, within PostgreSQL's limits."""
    positions: dict[str, list[str]] = {}
    size = 0
    for index, token, weight in numbered:
        if not token:
            continue
        lexeme = tag + token
        places = positions.get(lexeme)
        if places is None:
            size += len(lexeme.encode("utf-8")) + 8
            if size > MAX_VECTOR_BYTES:
                break
            positions[lexeme] = places = []
        if len(places) < MAX_POSITIONS_PER_LEXEME:
            places.append(f"{index}{weight}")
    return " ".join(
        f"{_quote(lexeme)}:{','.join(places)}" for lexeme, places in positions.items()
    )


def _phrase(group: Sequence[str], tag: str, prefix: bool) -> str:
    parts = [_quote(tag + fold(token)) for token in group]
    if prefix:
        parts[-1] += ":*"
    return parts[0] if len(parts) == 1 else "(" + " <-> ".join(parts) + ")"


def query_groups(groups: Sequence[Sequence[str]]) -> list[tuple[str, ...]]:
    """Non-empty groups, de-duplicated after folding, in their first order."""
    seen: dict[tuple[str, ...], None] = {}
    for group in groups:
        folded = tuple(f for f in (fold(t) for t in group) if f)
        if folded:
            seen.setdefault(folded, None)
    return list(seen)


def group_query(group: Sequence[str], tag: str, prefix: bool = False) -> str:
    """A tsquery literal matching one group as a phrase (its last token a prefix if asked)."""
    return _phrase(group, tag, prefix)


def any_query(groups: Sequence[Sequence[str]], tag: str) -> str:
    """A tsquery literal matching documents that contain ANY of the groups."""
    return " | ".join(_phrase(g, tag, False) for g in groups)


def all_query(groups: Sequence[Sequence[str]], tag: str) -> str:
    """Every group required, each one's last token a prefix (list_memories search)."""
    return " & ".join(_phrase(g, tag, True) for g in groups)


def recall_weights(context_weight: float = KEYWORD_CONTEXT_WEIGHT) -> str:
    """ts_rank_cd's weights, ordered {D, C, B, A}: a memory's own stems are A, its
    context's B."""
    return f"{{0, 0, {float(context_weight)!r}, 1}}"


def recall_tsvector_literal(content: str, context: str | None, tag: str) -> str:
    """The recall side of the keyword index: the memory's stems (weight A) and its save-time
    context's stems (weight B, positions after a gap so no phrase spans the two)."""
    own = [fold(t) for t in stemmed_terms(content).split()]
    extra = [fold(t) for t in stemmed_terms(context).split()] if context else []
    start = min(len(own), MAX_POSITION - 1) + 2
    numbered = [(i, t, "A") for i, t in enumerate(own[: MAX_POSITION - 2], start=1)]
    numbered += [(i, t, "B") for i, t in enumerate(extra, start=start) if i <= MAX_POSITION]
    return _literal(numbered, tag)
