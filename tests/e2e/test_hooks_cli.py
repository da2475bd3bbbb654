"""`tinycontext hook`, `context` and `service` as subprocesses against the real memory service
(real SQLite store, real ONNX model): recall for a prompt, nothing for an unrelated one, explicit
capture, once per agent session, every failure exits 0 with nothing injected and one log line,
one service per store."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.servers import cli_env, short_runtime_dir, tinycontext_command

pytestmark = pytest.mark.slow


def run(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([*tinycontext_command(), *args], input=stdin, env=env, text=True,
                          capture_output=True, timeout=120)


def prompt(env: dict[str, str], text: str, session: str = "agent-1") -> str:
    """The additionalContext a UserPromptSubmit hook returns ("" when it prints nothing)."""
    event = {"session_id": session, "hook_event_name": "UserPromptSubmit", "prompt": text,
             "cwd": "/work/projects/billing"}
    done = run(env, "hook", "UserPromptSubmit", stdin=json.dumps(event))
    assert done.returncode == 0, done.stderr
    if not done.stdout.strip():
        return ""
    out = json.loads(done.stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    return str(out["hookSpecificOutput"]["additionalContext"])


@pytest.fixture
def env(tmp_path: Path) -> Iterator[dict[str, str]]:
    with short_runtime_dir() as runtime:
        environment = cli_env(tmp_path, XDG_RUNTIME_DIR=str(runtime))
        # A hook gives up after 3 s; on a busy machine the service's first start can take
        # longer.
        assert run(environment, "context", "warm up").returncode == 0
        yield environment
        run(environment, "service", "stop")


def hooks_log(env: dict[str, str]) -> str:
    path = Path(env["XDG_RUNTIME_DIR"]) / "tinycontext" / "hooks.log"
    return path.read_text() if path.exists() else ""


def test_capture_then_recall_once_per_session(env: dict[str, str]) -> None:
    saved = prompt(env, "Remember that the billing service's staging database listens on "
                        "port 5433. Then run the tests.")
    assert "Saved to memory" in saved and "<memory" not in saved
    listed = run(env, "export", "--no-embeddings")
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    assert [r["content"] for r in rows] == [
        "The billing service's staging database listens on port 5433."]
    assert rows[0]["session_id"] == "billing"  # the project folder's name
    # The same agent session was told about the save: not injected again.
    assert prompt(env, "which port does the billing staging database use?") == ""
    other = prompt(env, "which port does the billing staging database use?", session="agent-2")
    assert "port 5433" in other and other.startswith("<recalled_memories")
    assert prompt(env, "which port does the billing staging database use?",
                  session="agent-2") == ""
    assert prompt(env, "run the tests", session="agent-3") == ""
    assert "5433" not in hooks_log(env)


def test_profile_at_session_start_and_context_command(env: dict[str, str]) -> None:
    assert "Saved to memory" in prompt(env, "My name is Ana Lopez.")
    event = {"session_id": "agent-9", "source": "startup", "cwd": "/work/projects/billing"}
    done = run(env, "hook", "SessionStart", stdin=json.dumps(event))
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "<agent_profile>" in context and "The user&apos;s name is Ana Lopez." in context
    printed = run(env, "context", "what", "is", "the", "user's", "name?")
    assert printed.returncode == 0 and printed.stdout == ""  # profile facts are not ranked
    assert run(env, "context", "deploy the frontend").stdout == ""


def test_failures_exit_zero_with_nothing_and_one_log_line(env: dict[str, str],
                                                          tmp_path: Path) -> None:
    done = run(env, "hook", "UserPromptSubmit", stdin="not json {")
    assert (done.returncode, done.stdout) == (0, "")
    assert "bad_input" in hooks_log(env)
    broken = dict(env, TINYCONTEXT_RECALL_TOP_K="many")  # a bad setting: a service that refuses
    secret = "remember that the vault password is hunter2-and-more"
    done = run(broken, "hook", "UserPromptSubmit", stdin=json.dumps({"prompt": secret}))
    assert (done.returncode, done.stdout) == (0, "")
    log = hooks_log(env)
    assert "service_error invalid_request" in log and "hunter2" not in log
    assert len(log.splitlines()) == 2
    run(broken, "service", "stop")


def test_one_service_per_store_and_stop(env: dict[str, str], tmp_path: Path) -> None:
    other = dict(env, TINYCONTEXT_MEMORY_DB_PATH=str(tmp_path / "other" / "memories.db"))
    prompt(env, "Remember that the first store holds this fact about invoices.")
    assert prompt(other, "what do we know about invoices?", session="x") == ""
    first, second = run(env, "service", "status"), run(other, "service", "status")
    assert first.returncode == second.returncode == 0
    assert str(tmp_path / "other") in second.stdout and str(tmp_path / "other") not in first.stdout
    folder = Path(env["XDG_RUNTIME_DIR"]) / "tinycontext"
    assert folder.stat().st_mode & 0o777 == 0o700
    assert all(p.stat().st_mode & 0o077 == 0 for p in folder.iterdir())
    assert "Stopped" in run(other, "service", "stop").stdout
    assert run(other, "service", "status").returncode == 3
    assert run(env, "service", "status").returncode == 0


def test_the_hook_path_imports_no_heavy_module(env: dict[str, str]) -> None:
    code = ("import sys, io\nfrom tinycontext.entry.cli import main\n"
            "sys.stdin = io.StringIO('{\"prompt\": \"run the tests\"}')\nmain(['hook', "
            "'UserPromptSubmit'])\nheavy = [m for m in ('pydantic', 'numpy', 'onnxruntime', "
            "'tinycontext.app', 'tinycontext.config', 'sqlite3') if m in sys.modules]\n"
            "print(json.dumps(heavy))\n")
    done = subprocess.run([sys.executable, "-c", "import json\n" + code], env=env, text=True,
                          capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == []


def test_gemini_cli_events(env: dict[str, str]) -> None:
    prompt(env, "Remember that the billing exports run at 02:00 UTC every night.")
    event = {"session_id": "gemini-1", "hook_event_name": "BeforeAgent", "cwd": "/w/billing",
             "timestamp": "2026-12-04T10:00:00Z", "prompt": "when do the billing exports run?"}
    done = run(env, "hook", "BeforeAgent", stdin=json.dumps(event))
    out = json.loads(done.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "BeforeAgent" and "02:00 UTC" in out["additionalContext"]


def test_several_agents_at_once_share_one_service(env: dict[str, str]) -> None:
    from concurrent.futures import ThreadPoolExecutor

    prompt(env, "Remember that the billing invoices are archived after 90 days.")
    question = "how long until billing invoices are archived?"
    with ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(lambda i: prompt(env, question, session=f"parallel-{i}"),
                                range(6)))
    assert all("90 days" in a for a in answers)
    status = run(env, "service", "status")
    assert status.returncode == 0 and status.stdout.count("pid") == 1
    assert "timeout" not in hooks_log(env)
