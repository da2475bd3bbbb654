"""The memory service's answers over the fakes: floor, budget, once per agent session, capture
(with its opt-out), errors as codes; and the socket key and seen-set files."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tinycontext.hooks.locate import UnsafeFolder, runtime_dir, service_environment, service_key
from tinycontext.hooks.locate import user_config_dir as hook_config_dir
from tinycontext.hooks.responder import StoreResponder, project_session
from tinycontext.hooks.seen import SeenSessions

FACT = "The billing service staging database listens on port 5433."


def responder(make: Any, **config: Any) -> StoreResponder:
    service = make(**config)
    return StoreResponder(service, service.config, SeenSessions())


def ask(r: StoreResponder, prompt: str, session: str = "s1") -> dict[str, Any]:
    return r.answer({"op": "hook", "event": "UserPromptSubmit", "prompt": prompt,
                     "session": session, "cwd": "/home/me/billing"})


def test_relevant_memory_once_per_session_and_nothing_below_the_floor(make: Any) -> None:
    r = responder(make, hook_relevance_floor=0.3, save_context_minutes=0)
    r.service.save([{"content": FACT}, {"content": "Lunch is at noon on Fridays."}])
    first = ask(r, "billing staging database port")
    assert first["ok"] and "port 5433" in first["context"] and "Lunch" not in first["context"]
    assert ask(r, "billing staging database port")["context"] == ""
    assert "port 5433" in ask(r, "billing staging database port", session="s2")["context"]
    strict = responder(make, hook_relevance_floor=0.99, save_context_minutes=0)
    assert ask(strict, "billing staging database port", session="s3")["context"] == ""


def test_budget_bounds_the_whole_block(make: Any) -> None:
    r = responder(make, hook_relevance_floor=-1.0, hook_max_tokens=60)
    r.service.save([{"content": f"Fact {i} about the billing database and its port."}
                    for i in range(8)])
    text = ask(r, "billing database port")["context"]
    assert 0 < r.service.tokenizer.count(text) <= 60 and text.count("<memory ") >= 1
    assert responder(make, hook_max_tokens=0).answer(
        {"op": "context", "text": "billing database"})["context"] == ""


def test_capture_saves_through_the_save_path_and_can_be_off(make: Any) -> None:
    r = responder(make)
    reply = ask(r, "Remember that the deploy key is ghp_abcdefghijklmnopqrstuvwxyz0123456789AB")
    assert "Saved to memory" in reply["context"]
    saved = r.service.list_page(limit=5).memories
    assert len(saved) == 1 and "[redacted:" in saved[0].content
    assert saved[0].session_id == "billing"
    ask(r, "Remember that the deploy key is ghp_abcdefghijklmnopqrstuvwxyz0123456789AB")
    assert r.service.list_page(limit=5).total_count == 1  # a duplicate is not saved twice
    ask(r, "My name is Ana.")
    assert r.service.recall("x").profile[0].content == "The user's name is Ana."
    off = responder(make, hook_capture=False)
    ask(off, "Remember that nothing is saved here, please.")
    assert off.service.list_page(limit=5).total_count == 2  # the shared store: unchanged


def test_errors_are_codes(make: Any) -> None:
    r = responder(make)
    assert r.answer({"op": "nonsense"}) == {"ok": False, "error": "unknown_request"}
    long_session = r.answer({"op": "hook", "event": "UserPromptSubmit", "prompt": "hi",
                             "session": "s", "cwd": "/x/" + "p" * 300})
    assert long_session["ok"]  # an overlong folder name is cut, not an error
    assert r.answer({"op": "stop"})["stopping"] is True
    assert r.answer({"op": "status"})["pid"] == os.getpid()


def test_project_session_name(make: Any) -> None:
    service = make()
    assert project_session(service.config, "/home/me/billing") == "billing"
    assert project_session(service.config, None) is None
    assert project_session(make(hook_session_id="work").config, "/home/me/billing") == "work"


def test_service_key_follows_the_store_and_the_config_file(tmp_path: Path) -> None:
    base = {"HOME": str(tmp_path), "TINYCONTEXT_MEMORY_DB_PATH": "a.db"}
    absolute = service_environment(base, cwd=str(tmp_path))
    assert absolute["TINYCONTEXT_MEMORY_DB_PATH"] == str(tmp_path / "a.db")
    key = service_key(absolute)
    assert service_key(dict(absolute)) == key
    assert service_key(service_environment(base, cwd="/elsewhere")) != key
    config = tmp_path / ".config" / "tinycontext" / "context_config.json"
    config.parent.mkdir(parents=True)
    config.write_text('{"recall_top_k": 5}')
    assert service_key(absolute) != key


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX folders")
def test_config_folder_matches_platformdirs_and_unsafe_runtime_folder(tmp_path: Path,
                                                                      monkeypatch: Any) -> None:
    from tinycontext.config.engine import user_config_dir

    env = {"HOME": os.path.expanduser("~"), **{k: v for k, v in os.environ.items()
                                             if k == "XDG_CONFIG_HOME"}}
    assert Path(hook_config_dir(env)) == user_config_dir()
    shared = tmp_path / "run"
    (shared / "tinycontext").mkdir(parents=True, mode=0o755)
    (shared / "tinycontext").chmod(0o755)
    with pytest.raises(UnsafeFolder):
        runtime_dir({"XDG_RUNTIME_DIR": str(shared)})


def test_seen_sessions_persist_and_stay_bounded(tmp_path: Path) -> None:
    seen = SeenSessions(tmp_path / "seen.json")
    seen.of("agent-1").update({"aaa", "bbb"})
    assert seen.of("") == set() and seen.of(None) == set()
    seen.save()
    assert (tmp_path / "seen.json").stat().st_mode & 0o777 == 0o600
    assert "agent-1" not in (tmp_path / "seen.json").read_text()
    assert SeenSessions(tmp_path / "seen.json").of("agent-1") == {"aaa", "bbb"}
    (tmp_path / "seen.json").write_text("not json")
    assert SeenSessions(tmp_path / "seen.json").of("agent-1") == set()


def test_a_capture_the_store_refuses_still_recalls(make: Any, monkeypatch: Any) -> None:
    from tinycontext.domain.errors import StoreReadOnlyError

    r = responder(make, hook_relevance_floor=0.3, save_context_minutes=0)
    r.service.save([{"content": FACT}])

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise StoreReadOnlyError("read-only")

    monkeypatch.setattr(r.service, "save", refuse)
    reply = ask(r, "Remember that the billing staging database port is important.")
    assert reply["ok"] and "port 5433" in reply["context"] and "Saved" not in reply["context"]
