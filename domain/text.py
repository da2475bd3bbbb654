"""Word-level text normalisation shared by keyword search and dedup.

FTS5's unicode61 tokenizer splits on spaces and punctuation, which leaves a run of Chinese or
Japanese characters as one giant token and drops emoji entirely. We index a rewritten copy of
each memory in which every CJK character stands alone and every emoji becomes a plain word, and
rewrite queries the same way, so both scripts match by keyword.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from .stemming import stem

_WORD = re.compile(r"[^\W_]+(?:[.'’-][^\W_]+)*", re.UNICODE)
_SPLIT_WORD = re.compile(r"[^\W_]+", re.UNICODE)

# Too common to say anything about relevance; dropped from recall queries only (list search
# keeps every word the user typed, as it is a filter).
STOPWORDS = frozenset(
    """a about above after again all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its
    itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself
    yourselves""".split()
)


def _is_cjk(ch: str) -> bool:
    code = ord(ch)
    return (
        0x3040 <= code <= 0x30FF  # hiragana, katakana
        or 0x3400 <= code <= 0x4DBF
        or 0x4E00 <= code <= 0x9FFF
        or 0xAC00 <= code <= 0xD7AF  # hangul syllables
        or 0xF900 <= code <= 0xFAFF
        or 0x20000 <= code <= 0x2FA1F
    )


def _is_symbol_word(ch: str) -> bool:
    # Emoji and pictographs: category So above the Latin ranges.
    return ord(ch) > 0x2000 and unicodedata.category(ch) == "So"


def searchable_text(text: str) -> str:
    """Rewrite text for the keyword index: NFKC, CJK characters spaced, emoji as words."""
    normalised = unicodedata.normalize("NFKC", text)
    if not normalised or max(normalised) < "\u2000":
        return normalised  # nothing to rewrite below U+2000 (the per-character loop is slow)
    out: list[str] = []
    for ch in normalised:
        if _is_cjk(ch):
            out.append(f" {ch} ")
        elif _is_symbol_word(ch):
            out.append(f" emoji{ord(ch):x} ")
        else:
            out.append(ch)
    return "".join(out)


def _runs(word: str) -> list[tuple[bool, str]]:
    """Split a word into maximal runs of CJK and non-CJK characters."""
    runs: list[tuple[bool, str]] = []
    for ch in word:
        cjk = _is_cjk(ch)
        if runs and runs[-1][0] == cjk:
            runs[-1] = (cjk, runs[-1][1] + ch)
        else:
            runs.append((cjk, ch))
    return runs


def keyword_groups(text: str) -> list[list[str]]:
    """Query words as groups of index tokens (a group is matched as a phrase).

    A Latin word with inner punctuation (`build.gradle`) is one phrase. A CJK run has no
    spaces between words, so it becomes overlapping two-character phrases: `东京` must appear
    as adjacent characters, and a whole CJK sentence still matches the memories sharing its
    words rather than only ones containing the entire sentence.
    """
    groups: list[list[str]] = []
    for word in unicodedata.normalize("NFKC", text).split():
        for cjk, run in _runs(word):
            if cjk:
                chars = list(run)
                if len(chars) == 1:
                    groups.append(chars)
                else:
                    groups.extend([a, b] for a, b in zip(chars, chars[1:], strict=False))
                continue
            parts = [p.casefold() for p in _SPLIT_WORD.findall(searchable_text(run))]
            if parts:
                groups.append(parts)
    return groups


def recall_terms(query: str) -> list[list[str]]:
    """Keyword groups for recall: stopwords dropped unless nothing else is left, de-duplicated."""
    groups = keyword_groups(query)
    seen: set[tuple[str, ...]] = set()
    unique: list[list[str]] = []
    for group in groups:
        key = tuple(group)
        if key not in seen:
            seen.add(key)
            unique.append(group)
    content = [g for g in unique if not (len(g) == 1 and g[0] in STOPWORDS)]
    return content or unique


@lru_cache(maxsize=4096)  # dedup compares one text against several neighbours
def informative_tokens(text: str) -> frozenset[str]:
    """The normalised words of a text (numbers, dates, versions and names included)."""
    normal = unicodedata.normalize("NFKC", text).casefold()
    tokens: set[str] = set()
    for word in _WORD.findall(searchable_text(normal)):
        tokens.add(word.strip(".'’-"))
        tokens.update(_SPLIT_WORD.findall(word))
    tokens.discard("")
    return frozenset(tokens)


def fold(word: str) -> str:
    """Case and accent folding as FTS5's unicode61 tokenizer with remove_diacritics 2 does."""
    if word.isascii():  # nothing to decompose, and casefold() is lower() on ASCII
        return word.lower()
    decomposed = unicodedata.normalize("NFKD", word)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


@lru_cache(maxsize=65536)  # Zipfian again: one lookup instead of a fold and a stem per word
def _recall_word(word: str) -> str:
    return stem(fold(word))


@lru_cache(maxsize=256)  # a save stems each text twice: as content, then as the next's context
def stemmed_terms(text: str) -> str:
    """The words of a text, folded then stemmed, space-separated: what the recall side of the
    keyword index holds (the listing side keeps the words as written, for prefixes)."""
    words = _SPLIT_WORD.findall(searchable_text(unicodedata.normalize("NFKC", text)))
    return " ".join(_recall_word(w) for w in words)


def stem_groups(groups: list[list[str]]) -> list[list[str]]:
    """Query groups with every word folded and stemmed, duplicates removed (order kept)."""
    seen: set[tuple[str, ...]] = set()
    out: list[list[str]] = []
    for group in groups:
        key = tuple(stem(fold(t)) for t in group)
        if key not in seen:
            seen.add(key)
            out.append(list(key))
    return out
