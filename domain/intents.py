"""Explicit "save this" intents in a user's prompt, found without a language model.

A hook sees every prompt a person types to an agent. Only what the person plainly asked to
keep is saved: a sentence that starts with "remember that ...", "note that ...", "from now
on ...", "always ..." / "never ...", "my name is ...", "call me ...", "I prefer ...".
Everything else (questions, "remember to ..." reminders for the task at hand, text inside code
blocks or quotes, "never mind") is left alone: a missed capture costs little, a wrong one
pollutes every later recall.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

EPISODIC, PROFILE = "episodic", "profile"
MAX_CAPTURES = 3
MIN_WORDS, MAX_CHARS = 2, 500

_FENCE = re.compile(r"```.*?(```|$)", re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_QUOTED_LINE = re.compile(r"^\s*>.*$", re.MULTILINE)
# A sentence ends at . ! ? or a line break; a period inside a number or a name (3.11,
# e.g. a.b) does not end it.
_SENTENCE = re.compile(r"[^.!?\n]+(?:\.(?=\S)[^.!?\n]*)*[.!?]*")
_LEAD = re.compile(
    r"^(?:(?:ok(?:ay)?|so|also|and|btw|by the way|fyi|hey|hi|oh|please|pls|"
    r"just|one more thing|one thing)\b[\s,:;-]*)+",
    re.IGNORECASE,
)
_POLITE_ASK = re.compile(r"^(?:can|could|would|will) you (?:please )?", re.IGNORECASE)

_REMEMBER = re.compile(
    r"^(?:remember|note|keep in mind|don't forget|do not forget|for the record)"
    r"(?: that\b|\s*:)\s*(?P<fact>.+)$",
    re.IGNORECASE,
)
_FROM_NOW_ON = re.compile(r"^(?:from now on|going forward|in future|in the future)\b[\s,:]*"
                          r"(?P<rule>.+)$", re.IGNORECASE)
_ALWAYS_NEVER = re.compile(r"^(?P<word>always|never)\s+(?P<rule>.+)$", re.IGNORECASE)
_NAME = re.compile(r"^(?:my name is|my name's|call me)\s+(?P<name>[^\s,;]+(?:\s+[^\s,;]+){0,2})"
                   r"\s*$", re.IGNORECASE)
_PREFER = re.compile(r"^i (?:(?:really|generally|usually) )?prefer\s+(?P<what>.+)$",
                     re.IGNORECASE)
# Words that open a question or a hedge: "never mind", "always the same error?".
_NOT_A_RULE = re.compile(r"^(?:mind|again|ever|before|seen|heard|been|the same|works?|fails?)\b",
                         re.IGNORECASE)
_NOT_A_NAME = re.compile(r"^(?:not|a|an|the|is|was|that|it|what|when|if)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Capture:
    """One memory to save: its content and kind (`episodic` or `profile`)."""

    content: str
    kind: str


def _sentences(prompt: str) -> list[str]:
    text = _FENCE.sub("\n", prompt)
    text = _INLINE_CODE.sub(" ", text)
    text = _QUOTED_LINE.sub("", text)
    return [m.group(0).strip() for m in _SENTENCE.finditer(text) if m.group(0).strip()]


def _finish(text: str) -> str:
    text = text.strip().strip(",;:- ").strip()
    if not text:
        return ""
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!" else text + "."


def _words(text: str) -> int:
    return len(re.findall(r"\w+", text))


def _about_user(fact: str) -> Capture | None:
    """A fact that is itself a name or a preference ("remember that I prefer tabs")."""
    if (match := _NAME.match(fact.rstrip(".!"))) and not _NOT_A_NAME.match(match["name"]):
        return Capture(f"The user's name is {match['name'].strip()}.", PROFILE)
    if match := _PREFER.match(fact):
        return Capture(_finish(f"The user prefers {match['what']}"), PROFILE)
    return None


def _capture(sentence: str) -> Capture | None:
    question = sentence.endswith("?")
    text = _LEAD.sub("", sentence.rstrip("!?. ")).strip()
    if _POLITE_ASK.match(text):
        text, question = _POLITE_ASK.sub("", text), False  # "could you remember that ..."
    if question or not text:
        return None
    if match := _REMEMBER.match(text):
        fact = match["fact"].strip()
        if _words(fact) < MIN_WORDS:
            return None
        return _about_user(fact) or Capture(_finish(fact), EPISODIC)
    if match := _FROM_NOW_ON.match(text):
        rule = match["rule"].strip()
        return Capture(_finish(f"From now on, {rule}"), PROFILE) if _words(rule) >= MIN_WORDS \
            else None
    if match := _ALWAYS_NEVER.match(text):
        rule = match["rule"].strip()
        if _NOT_A_RULE.match(rule) or _words(rule) < MIN_WORDS:
            return None
        return Capture(_finish(f"{match['word'].capitalize()} {rule}"), PROFILE)
    return _about_user(text)


def explicit_captures(prompt: str) -> list[Capture]:
    """The memories a prompt explicitly asks to keep (at most MAX_CAPTURES, no repeats)."""
    found: list[Capture] = []
    for sentence in _sentences(prompt):
        capture = _capture(sentence)
        if capture is None or len(capture.content) > MAX_CHARS or capture in found:
            continue
        found.append(capture)
        if len(found) == MAX_CAPTURES:
            break
    return found
