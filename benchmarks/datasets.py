"""Loaders for the public evaluation sets: LoCoMo and LongMemEval (read from a local path).

Only the loaders live here: the data itself is never part of the repository.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.metrics import parse_locomo_evidence

# ---------------------------------------------------------------------------------------- LoCoMo

LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop",
                     5: "adversarial"}
_SESSION_KEY = re.compile(r"session_(\d+)$")


@dataclass(frozen=True)
class LocomoTurn:
    dia_id: str
    session: int
    date: str
    speaker: str
    text: str
    caption: str | None = None

    def render(self, with_date: bool = True) -> str:
        """The memory saved for this turn: `[<session date>] <speaker>: <text>`, plus the
        image caption the dataset gives for shared photos; without the date, the text (and
        caption) alone."""
        body = self.text.strip()
        if self.caption:
            shared = f"[shared a photo: {self.caption.strip()}]"
            body = f"{body} {shared}" if body else shared
        if not with_date:  # the plain shape: the turn's own words only
            return body
        line = f"{self.speaker}: {body}"
        return f"[{self.date}] {line}" if self.date else line

    def when(self) -> datetime | None:
        """The session's date and time ("1:56 pm on 8 May, 2023") as UTC, None if unreadable."""
        try:
            return datetime.strptime(self.date, "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
        except ValueError:
            return None


@dataclass(frozen=True)
class LocomoQA:
    question: str
    category: int
    evidence: tuple[str, ...]  # parsed ids that name a turn of this conversation
    raw_evidence: tuple[str, ...]
    unknown_evidence: tuple[str, ...] = ()  # parsed ids naming no turn (dropped)


@dataclass
class LocomoConversation:
    sample_id: str
    turns: list[LocomoTurn] = field(default_factory=list)
    qas: list[LocomoQA] = field(default_factory=list)


def _locomo_turns(conversation: dict[str, Any]) -> list[LocomoTurn]:
    sessions = sorted(
        (int(m.group(1)), key)
        for key in conversation
        if (m := _SESSION_KEY.match(key)) and isinstance(conversation[key], list)
    )
    turns = []
    for number, key in sessions:
        date = str(conversation.get(f"{key}_date_time", "")).strip()
        for raw in conversation[key]:
            caption = raw.get("blip_caption") if raw.get("img_url") or raw.get("blip_caption") \
                else None
            dia_id = parse_locomo_evidence(raw.get("dia_id", ""))
            if not dia_id:
                continue
            turns.append(LocomoTurn(dia_id[0], number, date, str(raw.get("speaker", "")).strip(),
                                    str(raw.get("text", "")), caption))
    return turns


def load_locomo(path: str | Path) -> list[LocomoConversation]:
    """Conversations with their turns in order and their QA items (evidence normalised)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a list of LoCoMo samples")
    out = []
    for position, sample in enumerate(data):
        if "conversation" not in sample or "qa" not in sample:
            raise ValueError(f"{path}: sample {position} lacks 'conversation' or 'qa'")
        conv = LocomoConversation(str(sample.get("sample_id", f"sample-{position}")))
        conv.turns = _locomo_turns(sample["conversation"])
        known = {t.dia_id for t in conv.turns}
        for qa in sample["qa"]:
            raw = qa.get("evidence") or []
            raw = [raw] if isinstance(raw, str) else list(raw)
            parsed = parse_locomo_evidence(raw)
            conv.qas.append(
                LocomoQA(
                    str(qa.get("question", "")), int(qa.get("category", 0)),
                    tuple(e for e in parsed if e in known), tuple(str(r) for r in raw),
                    tuple(e for e in parsed if e not in known),
                )
            )
        out.append(conv)
    return out


# ----------------------------------------------------------------------------------- LongMemEval

LME_REQUIRED = ("question_id", "question_type", "question", "haystack_session_ids",
                "haystack_sessions", "answer_session_ids")


@dataclass(frozen=True)
class LmeSession:
    session_id: str
    date: str
    turns: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class LmeQuestion:
    question_id: str
    question_type: str
    question: str
    question_date: str
    sessions: tuple[LmeSession, ...]
    answer_session_ids: tuple[str, ...]

    @property
    def abstention(self) -> bool:
        return self.question_id.endswith("_abs")


def read_json_any(path: str | Path) -> Any:
    """JSON from a .json or .json.gz file."""
    raw = Path(path).read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw.decode("utf-8"))


def load_longmemeval(path: str | Path) -> list[LmeQuestion]:
    """Questions in the official LongMemEval format (a list of items)."""
    data = read_json_any(path)
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a list of LongMemEval items")
    out = []
    for position, item in enumerate(data):
        missing = [k for k in LME_REQUIRED if k not in item]
        if missing:
            raise ValueError(f"{path}: item {position} lacks {', '.join(missing)}")
        ids, sessions = item["haystack_session_ids"], item["haystack_sessions"]
        dates = item.get("haystack_dates") or [""] * len(ids)
        if not (len(ids) == len(sessions) == len(dates)):
            raise ValueError(f"{path}: item {position} has haystack lists of different lengths")
        out.append(
            LmeQuestion(
                str(item["question_id"]), str(item["question_type"]), str(item["question"]),
                str(item.get("question_date", "")),
                tuple(LmeSession(str(s), str(d), tuple(t))
                      for s, d, t in zip(ids, dates, sessions, strict=True)),
                tuple(str(s) for s in item["answer_session_ids"]),
            )
        )
    return out


def lme_memories(question: LmeQuestion, turns: str = "user") -> list[tuple[str, str]]:
    """(session id, memory text) per indexed turn: `[<session date>] <role>: <content>`.

    `turns` is "user" (the default: user turns only) or "all"; blank turns are left out.
    """
    if turns not in ("user", "all"):
        raise ValueError("turns must be 'user' or 'all'")
    out = []
    for session in question.sessions:
        for turn in session.turns:
            role = str(turn.get("role", ""))
            content = str(turn.get("content", "")).strip()
            if not content or (turns == "user" and role != "user"):
                continue
            prefix = f"[{session.date}] " if session.date else ""
            out.append((session.session_id, f"{prefix}{role}: {content}"))
    return out


def deterministic_sample(questions: list[LmeQuestion], limit: int | None,
                         seed: int = 0) -> list[LmeQuestion]:
    """`limit` questions chosen by a seeded hash of their ids, kept in file order."""
    if limit is None or limit >= len(questions):
        return list(questions)

    def key(q: LmeQuestion) -> str:
        return hashlib.sha256(f"{seed}:{q.question_id}".encode()).hexdigest()

    chosen = {q.question_id for q in sorted(questions, key=key)[:limit]}
    return [q for q in questions if q.question_id in chosen]
