"""The real Gemini CLI (npm @google/gemini-cli) with the hooks `tinycontext setup gemini`
writes (SessionStart, BeforeAgent), offline against a loopback Gemini API stand-in
(GOOGLE_GEMINI_BASE_URL) that records what the model is sent.

A prompt matching a stored memory sends that memory to the model; an unrelated prompt sends
none; "remember that ..." is in the store afterwards. HOME is a temporary folder. Skipped only
where npm is missing; the CLI is installed into a cache folder on first use.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.servers import cli_env, tinycontext_command
from tests.e2e.standin_gemini import GeminiStandIn, standin_gemini
from tests.e2e.test_claude_code_hooks import MEMORY, save, stored

pytestmark = pytest.mark.slow
GEMINI_PACKAGE = "@google/gemini-cli@0.61.0"
NPM_FOLDER = Path(os.environ.get("GEMINI_CLI_NPM_PREFIX")
                  or Path(tempfile.gettempdir()) / "tinycontext-test-npm-gemini")


@pytest.fixture(scope="module")
def gemini() -> str:
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("Node.js and npm are needed to install Gemini CLI (npm @google/gemini-cli); "
                    ".ci/run installs them")
    binary = NPM_FOLDER / "node_modules" / ".bin" / "gemini"
    if not binary.exists():
        subprocess.run(["npm", "install", "--prefix", str(NPM_FOLDER), "--no-audit", "--no-fund",
                        "--silent", GEMINI_PACKAGE], check=True, timeout=600, capture_output=True)
    return str(binary)


@pytest.fixture
def project(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    home, folder, run = tmp_path / "home", tmp_path / "shop-frontend", tmp_path / "run"
    for path in (home, folder, run):
        path.mkdir(mode=0o700)
    env = cli_env(tmp_path, HOME=str(home), XDG_RUNTIME_DIR=str(run),
                  XDG_CONFIG_HOME=str(home / ".config"), GEMINI_API_KEY="standin-key",
                  # headless runs need the folder trusted (Gemini CLI's trusted folders)
                  GEMINI_CLI_TRUST_WORKSPACE="true")
    for name in [n for n in env if n.startswith(("GOOGLE_", "GEMINI_CLI_HOME"))]:
        del env[name]
    command = tinycontext_command()
    done = subprocess.run([*command, "setup", "gemini", "--scope", "project"], cwd=folder,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    # The API key sign-in, chosen in the user's settings as `gemini` would after asking.
    (home / ".gemini").mkdir()
    (home / ".gemini" / "settings.json").write_text(
        json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}))
    warm = subprocess.run([*command, "context", "warm up"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert warm.returncode == 0, warm.stderr
    yield folder, env
    subprocess.run([*command, "service", "stop"], env=env, capture_output=True, timeout=60)


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
    assert "5433" not in sent and "recalled_memories" not in sent


def test_remember_that_is_stored(gemini: str, project: tuple[Path, dict[str, str]]) -> None:
    folder, env = project
    ask(gemini, folder, env, "Remember that the release branch is cut every second Thursday.")
    assert stored(env) == ["The release branch is cut every second Thursday."]
