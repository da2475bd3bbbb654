"""Pseudo-relevance feedback on the keyword side: a second keyword query made of the rarest
words shared by the first pass's best results, whose matches join the candidates at a lower
weight; or, without a second query, the best candidates already in hand re-weighed by how
much of the question's and those words' rarity each one holds.

An answer spread over several conversations often shares no word with the question in its
second half ("What did she do after the move?" -> a memory about the new flat that never
says "move"), but it shares words with the first half, which the question does find. The
words the best first results have in common and the rest of the store rarely holds are
the likeliest to name that shared topic; the second query pulls in memories holding them
that neither retriever had among its candidates.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence, Set

# How many of the first pass's best candidates lend their words.
FEEDBACK_DOCS = 3
# At most this many words are added: a bounded second query (its cost grows with the
# postings of its words) and a topic rather than a copy of one memory.
FEEDBACK_TERMS = 6
# A word must be at least this rare (its IDF, natural log): shared filler words ("really",
# "great") are common in any conversational store and would only pull in more small talk.
FEEDBACK_MIN_IDF = 2.5
# Words shorter than this carry little topic (after stemming: "go", "ok", numerals like "2").
FEEDBACK_MIN_LENGTH = 3
# Feedback in hand re-weighs only this many of the best fused candidates: the evidence it
# lifts into the top slots is rarely further down, and each one re-weighed costs a read of
# its words. Chosen on LoCoMo conversations 1-5 (docs/results/recall-levers.md).
INHAND_DEPTH = 50


def feedback_candidates(
    documents: Sequence[Sequence[str]], query_words: Set[str], stopwords: Set[str],
) -> list[str]:
    """The words of the best results (each a list of stemmed words) that could expand the
    query: not already asked, not a stopword, long enough; in order of first appearance."""
    seen: dict[str, None] = {}
    for words in documents:
        for word in words:
            if (len(word) >= FEEDBACK_MIN_LENGTH and not word.isdigit()
                    and word not in query_words and word not in stopwords):
                seen.setdefault(word, None)
    return list(seen)


def feedback_terms(
    documents: Sequence[Sequence[str]], idf: Mapping[str, float],
    weights: Sequence[float] | None = None,
    limit: int = FEEDBACK_TERMS, min_idf: float = FEEDBACK_MIN_IDF,
) -> list[str]:
    """The expansion words: each candidate word weighed by its IDF times the summed weight
    (the fused score, by default 1 each) of the best results holding it, so a word two of
    them share names their topic better than one only a weaker result holds; the `limit`
    best at least `min_idf` rare. Ties go to the word met first (the better result's), so
    the same results always give the same words."""
    held: dict[str, float] = {}
    order: dict[str, int] = {}
    for index, words in enumerate(documents):
        weight = weights[index] if weights is not None else 1.0
        for word in set(words):
            if word in idf:
                held[word] = held.get(word, 0.0) + weight
        for word in words:
            order.setdefault(word, len(order))
    weighed = [(idf[w] * held[w], -order[w], w) for w in held if idf[w] >= min_idf]
    weighed.sort(reverse=True)
    return [w for _, _, w in weighed[:limit]]


def feedback_shares(scores: Mapping[str, float], scale: float) -> dict[str, float]:
    """Each feedback match's keyword score as a share of `scale` (the larger of its best
    score and the score of a memory holding every expansion word), 0..1."""
    top = max(max(scores.values(), default=0.0), scale)
    if top <= 0:
        return {}
    return {mid: max(s, 0.0) / top for mid, s in scores.items()}


def held_shares(
    documents: Mapping[str, Collection[str]], idf: Mapping[str, float], words: Sequence[str],
) -> dict[str, float]:
    """Each document's share (0..1) of the words' summed IDF that it holds: a word counts
    once however often the document repeats it, and a word the store holds nowhere (missing
    from `idf`) weighs nothing. Documents holding none are left out; {} when the words weigh
    nothing at all.

    No term frequency and no length normalisation, unlike BM25: the candidates were already
    found by both retrievers, and what is asked here is only which of them speak of the
    question's topic as its best results name it."""
    weighed = {w: idf.get(w, 0.0) for w in words}
    scale = sum(weighed.values())
    if scale <= 0:
        return {}
    shares: dict[str, float] = {}
    for key, held in documents.items():
        total = sum(value for word, value in weighed.items() if word in held)
        if total > 0:
            shares[key] = total / scale
    return shares


def reweigh(
    base: Sequence[float], keys: Sequence[str], shares: Mapping[str, float], weight: float,
) -> list[float]:
    """Fusion scores (`base`, one per key, in order) with `weight` x each key's share added
    (0 for keys without one); unchanged when the weight or the shares are empty."""
    if weight <= 0 or not shares:
        return list(base)
    return [value + weight * shares.get(key, 0.0)
            for value, key in zip(base, keys, strict=True)]
