"""Which memories each agent session was already given, so none is injected twice.

Kept in the service's memory for the most recent sessions and written to an owner-only file
when the service stops, so a session outliving an idle stop still remembers. Session ids are
stored hashed; only memory refs are kept, never content.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections import OrderedDict
from pathlib import Path

MAX_SESSIONS = 512
MAX_AGE_SECONDS = 7 * 24 * 3600


def _key(session: object) -> str:
    return hashlib.sha256(str(session).encode()).hexdigest()[:24]


class SeenSessions:
    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self._sessions: OrderedDict[str, tuple[float, set[str]]] = OrderedDict()
        self._load()

    def of(self, session: object) -> set[str]:
        """The refs this agent session was given (a throwaway set without a session id)."""
        if not isinstance(session, str) or not session:
            return set()
        key = _key(session)
        _, refs = self._sessions.pop(key, (0.0, set()))
        self._sessions[key] = (time.time(), refs)
        while len(self._sessions) > MAX_SESSIONS:
            self._sessions.popitem(last=False)
        return refs

    def _load(self) -> None:
        if self.path is None:
            return
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        now = time.time()
        if not isinstance(data, dict):
            return
        for key, entry in list(data.items())[-MAX_SESSIONS:]:
            with contextlib.suppress(TypeError, ValueError):
                stamp, refs = float(entry[0]), {str(r) for r in entry[1]}
                if now - stamp < MAX_AGE_SECONDS:
                    self._sessions[str(key)] = (stamp, refs)

    def save(self) -> None:
        if self.path is None:
            return
        data = {key: [stamp, sorted(refs)] for key, (stamp, refs) in self._sessions.items()}
        temporary = self.path.with_suffix(".tmp")
        handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(data, out)
        os.replace(temporary, self.path)
