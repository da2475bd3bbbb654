"""The options of an import and its summary (what a dry run prints; what an import did)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .items import ImportItem

SAMPLES = 3
SAMPLE_CHARS = 160


@dataclass(frozen=True)
class ImportOptions:
    session_id: str | None = None
    tags: tuple[str, ...] = ()
    include_assistant: bool = False
    dry_run: bool = False
    batch_size: int = 64


@dataclass
class ImportSummary:
    fmt: str
    dry_run: bool = False
    pieces: int = 0  # memories the source yields after splitting
    new: int = 0  # of those, not already in the store
    already_imported: int = 0
    imported: int = 0
    duplicates: int = 0  # skipped by dedup (near-identical to a stored memory)
    split: int = 0  # source texts cut into several memories
    redacted: int = 0
    by_session: Counter[tuple[str, str]] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    skipped_at: dict[str, str] = field(default_factory=dict)  # first place of each reason
    samples: list[dict[str, Any]] = field(default_factory=list)
    tags: Counter[str] = field(default_factory=Counter)

    def skip(self, reason: str, where: str) -> None:
        self.skipped[reason] += 1
        self.skipped_at.setdefault(reason, where)

    def count(self, item: ImportItem, already: bool) -> None:
        self.pieces += 1
        if already:
            self.already_imported += 1
            return
        self.new += 1
        self.by_session[(item.session_id or "(no session)", item.kind)] += 1
        self.tags.update(item.tags)
        if len(self.samples) < SAMPLES:
            text = item.content if len(item.content) <= SAMPLE_CHARS \
                else item.content[:SAMPLE_CHARS] + "..."
            self.samples.append({"session_id": item.session_id, "kind": item.kind,
                                 "created_at": item.created_at, "role": item.role,
                                 "tags": list(item.tags), "content": text})

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.fmt, "dry_run": self.dry_run, "memories": self.pieces,
            "new": self.new, "already_imported": self.already_imported,
            "imported": self.imported, "skipped_duplicates": self.duplicates,
            "split_messages": self.split, "redacted": self.redacted,
            "sessions": [{"session_id": s, "kind": k, "count": n}
                         for (s, k), n in sorted(self.by_session.items())],
            "skipped": [{"reason": r, "count": n, "first_at": self.skipped_at[r]}
                        for r, n in self.skipped.most_common()],
            "tags": dict(self.tags.most_common(20)),
            "samples": self.samples,
        }
