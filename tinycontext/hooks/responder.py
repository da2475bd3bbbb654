"""The memory service's answers: the hook events, `context`, `status` and `stop`, over the
store the service's environment names.

Nothing here raises to the socket: a failure is an `{"ok": false, "error": code}` reply and the
hook injects nothing. Logs carry codes and counts, never prompts or memory content.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tinycontext.adapters.mcp.frame import PROMPT_FRAMING
from tinycontext.app.recalling import count_recalls
from tinycontext.app.results import RecallResult
from tinycontext.app.service import MemoryService
from tinycontext.config.engine import TinyContextConfig
from tinycontext.domain.errors import TinyContextError
from tinycontext.domain.intents import EPISODIC, explicit_captures
from tinycontext.domain.limits import MAX_QUERY_CHARS
from tinycontext.domain.memory import MemoryInput
from tinycontext.hooks.blocks import above_floor, fit
from tinycontext.hooks.locate import Place
from tinycontext.hooks.seen import SeenSessions

log = logging.getLogger("tinycontext.service")
CANDIDATES = 8  # recalled per prompt before the floor, the seen set and the budget
PROJECT_RECENT = 3  # the project's newest memories offered at session start
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
DEFAULT_IDLE_SECONDS = 1800.0


class Responder:
    """The answers of a service whose store could not be opened: every one is that error."""

    def __init__(self, error: str, idle_seconds: float = DEFAULT_IDLE_SECONDS) -> None:
        self.error, self.idle_seconds = error, idle_seconds
        self.started, self.requests = time.time(), 0

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        self.requests += 1
        op = request.get("op")
        if op == "stop":
            return {"ok": True, "stopping": True}
        if op == "status":
            return {"ok": True, **self.status()}
        return {"ok": False, "error": self.error}

    def status(self) -> dict[str, Any]:
        return {"pid": os.getpid(), "started": int(self.started), "requests": self.requests,
                "idle_minutes": self.idle_seconds / 60, "error": self.error}

    def warm(self) -> None:
        """Load the model before the first request needs it."""

    def close(self) -> None:
        """Release the store."""


def project_session(config: TinyContextConfig, cwd: object) -> str | None:
    """The session id of a project's memories: the setting, else the folder's name."""
    name = config.hook_session_id or (Path(cwd).name if isinstance(cwd, str) and cwd else "")
    name = _CONTROL.sub("", name).strip()[:200]
    return name or None


class StoreResponder(Responder):
    def __init__(self, service: MemoryService, config: TinyContextConfig,
                 seen: SeenSessions) -> None:
        super().__init__("", config.service_idle_minutes * 60)
        self.service, self.config, self.seen = service, config, seen

    def status(self) -> dict[str, Any]:
        return {**super().status(), "store": self.config.memory_db_path}

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request.get("op")
        try:
            if op in ("stop", "status"):
                return super().answer(request)
            self.requests += 1
            if op == "hook" and request.get("event") == "SessionStart":
                text = self.session_start(request)
            elif op == "hook" and request.get("event") == "UserPromptSubmit":
                text = self.prompt(request)
            elif op == "context":
                text = self.context(request)
            else:
                return {"ok": False, "error": "unknown_request"}
        except TinyContextError as exc:
            log.warning("%s request failed: %s", op, exc.code)
            return {"ok": False, "error": exc.code}
        except Exception as exc:  # noqa: BLE001 - the hook must get an answer, not a hang
            log.warning("%s request failed: %s", op, type(exc).__name__)
            return {"ok": False, "error": "internal_error"}
        return {"ok": True, "context": text}

    def _recall(self, query: str, budget: int, seen: set[str],
                notice: str | None = None) -> str:
        result = self.service.recall(query[:MAX_QUERY_CHARS], max_tokens=max(budget, 1) * 3,
                                     top_k=CANDIDATES, count=False, framing=PROMPT_FRAMING)
        kept = above_floor(result.memories, self.config.hook_relevance_floor, seen)
        text, chosen = fit(result, kept, budget, self.service.tokenizer.count, notice=notice)
        self._given(chosen, seen)
        return text

    def _given(self, chosen: list[Any], seen: set[str]) -> None:
        if chosen:
            count_recalls(self.service.core, [m.id for m in chosen], self.service.core.now())
            seen.update(m.ref for m in chosen)

    def session_start(self, request: Mapping[str, Any]) -> str:
        seen = self.seen.of(request.get("session"))
        if request.get("source") in ("clear", "compact"):
            seen.clear()  # the agent's context was emptied: what it was given is gone
        project = project_session(self.config, request.get("cwd"))
        budget = self.config.hook_max_tokens
        result = self.service.recall(project or "", max_tokens=max(budget, 1) * 3,
                                     top_k=CANDIDATES, count=False, framing=PROMPT_FRAMING)
        kept = above_floor(result.memories, self.config.hook_relevance_floor, seen) \
            if project else []
        kept += [m for m in self._project_recent(project) if m.ref not in seen
                 and all(m.ref != k.ref for k in kept)]
        text, chosen = fit(result, kept, budget, self.service.tokenizer.count,
                           profile=result.profile)
        self._given(chosen, seen)
        return text

    def _project_recent(self, project: str | None) -> list[Any]:
        if not project:
            return []
        try:
            recent: RecallResult = self.service.recall(None, session_id=project,
                                                       top_k=PROJECT_RECENT,
                                                       framing=PROMPT_FRAMING)
        except TinyContextError as exc:
            if exc.code == "session_not_found":
                return []
            raise
        return list(recent.memories)

    def prompt(self, request: Mapping[str, Any]) -> str:
        prompt = request.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            return ""
        seen = self.seen.of(request.get("session"))
        notice = None
        if self.config.hook_capture:
            refs = self._capture(prompt, project_session(self.config, request.get("cwd")))
            if refs:
                seen.update(refs)
                notice = ("Saved to memory as the user asked (ref " + ", ".join(refs) + "); "
                          "no need to save it again.")
        return self._recall(prompt, self.config.hook_max_tokens, seen, notice)

    def _capture(self, prompt: str, project: str | None) -> list[str]:
        refs: list[str] = []
        for capture in explicit_captures(prompt):
            session = project if capture.kind == EPISODIC else None
            try:
                saved = self.service.save([MemoryInput(capture.content, capture.kind)], session)
            except TinyContextError as exc:  # a refused save must not cost the prompt its recall
                log.warning("capture not saved: %s", exc.code)
                continue
            refs += [item.ref for item in saved.saved]
            refs += [skip.duplicate_of for skip in saved.skipped_duplicates]
        if refs:
            log.info("captured %d explicit memories", len(refs))
        return refs

    def context(self, request: Mapping[str, Any]) -> str:
        text = request.get("text")
        if not isinstance(text, str) or not text.strip():
            return ""
        budget = request.get("max_tokens")
        budget = budget if isinstance(budget, int) and budget > 0 else self.config.hook_max_tokens
        session = request.get("session")
        seen = self.seen.of(session) if session else set()
        return self._recall(text, budget, seen)

    def warm(self) -> None:
        self.service.tokenizer.count("warm up")
        self.service.embedder.embed(["warm up"])

    def close(self) -> None:
        self.seen.save()
        self.service.close()


def open_responder(env: Mapping[str, str], place: Place) -> Responder:
    """The responder of this environment's store; on a configuration or store error, one that
    answers that error until the service goes idle."""
    try:
        from tinycontext.entry.bootstrap import engine_service, read_settings

        settings = read_settings(env)
        service: MemoryService = engine_service(settings)
        return StoreResponder(service, settings.config, SeenSessions(place.seen))
    except TinyContextError as exc:
        log.warning("the store could not be opened: %s", exc.code)
        return Responder(exc.code)
    except Exception as exc:  # noqa: BLE001
        log.warning("the store could not be opened: %s", type(exc).__name__)
        return Responder("store_unavailable")
