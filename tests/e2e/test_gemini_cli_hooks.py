"""The real Gemini CLI (npm @google/gemini-cli) with the hooks `tinycontext setup gemini`
writes (SessionStart, BeforeAgent), offline against a loopback Gemini API stand-in
(GOOGLE_GEMINI_BASE_URL) that records what the model is sent.

A prompt matching a stored memory sends that memory to the model; an unrelated prompt sends
none; "remember that ..." is in the store afterwards. HOME is a temporary folder. Skipped only
where npm is missing; the CLI is installed into a cache folder on first use.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.agent_clients import MEMORY, configured_project, npm_client, save, stored
from tests.e2e.standin_gemini import GeminiStandIn, standin_gemini

pytestmark = pytest.mark.slow
GEMINI_PACKAGE = "@google/gemini-cli@0.61.0"


@pytest.fixture(scope="module")
def gemini() -> str:
    return npm_client(GEMINI_PACKAGE, "gemini", "GEMINI_CLI_NPM_PREFIX",
                      "tinycontext-test-npm-gemini")


@pytest.fixture
def project(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    # Headless runs need the folder trusted (Gemini CLI's trusted folders).
    with configured_project(tmp_path, "gemini", ("GOOGLE_", "GEMINI_CLI_HOME"),
                            GEMINI_API_KEY="standin-key",
                            GEMINI_CLI_TRUST_WORKSPACE="true") as (folder, env):
        # The API key sign-in, chosen in the user's settings as `gemini` would after asking.
        (tmp_path / "home" / ".gemini").mkdir()
        (tmp_path / "home" / ".gemini" / "settings.json").write_text(
            json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}))
        yield folder, env


def ask(gemini: str, folder: Path, env: dict[str, str], prompt: str) -> tuple[str, str]:
    """Run `gemini -p` against a stand-in; (its answer, what the model was sent as JSON)."""
    standin: GeminiStandIn
    with standin_gemini("Done.") as (base, standin):
        done = subprocess.run([gemini, "-m", "gemini-2.5-flash", "-p", prompt], cwd=folder,
                              env=dict(env, GOOGLE_GEMINI_BASE_URL=base), capture_output=True,
                              text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-1000:] + done.stderr[-2000:]
    assert any(r["path"].endswith(":streamGenerateContent") for r in standin.requests)
    return done.stdout, standin.sent()


def test_a_matching_prompt_sends_the_memory(gemini: str,
                                            project: tuple[Path, dict[str, str]]) -> None:
    folder, env = project
    save(env, MEMORY)
    _, sent = ask(gemini, folder, env, "Which port does the billing staging database listen on?")
    assert "port 5433" in sent and "recalled_memories" in sent


def test_an_unrelated_prompt_sends_no_memory(gemini: str,
                                             project: tuple[Path, dict[str, str]]) -> None:
    folder, env = project
    save(env, MEMORY)
    _, sent = ask(gemini, folder, env, "run the tests")
    # The recall tool's description names the frame; an injected block carries attributes.
    assert "5433" not in sent and "<recalled_memories current_time" not in sent


def test_remember_that_is_stored(gemini: str, project: tuple[Path, dict[str, str]]) -> None:
    folder, env = project
    ask(gemini, folder, env, "Remember that the release branch is cut every second Thursday.")
    assert stored(env) == ["The release branch is cut every second Thursday."]
