"""What a person sees when starting the servers by hand: one clear line, never a traceback."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.e2e.servers import cli_env, free_port, tinycontext_command

pytestmark = pytest.mark.slow

HINT = "this is the MCP server on stdio, waiting for an MCP client"


def _read_until(fd: int, needle: bytes, timeout: float) -> bytes:
    seen = b""
    deadline = time.monotonic() + timeout
    while needle not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            seen += chunk
    return seen


def test_stdio_from_a_terminal_says_what_it_is_on_stderr_only(tmp_path: Path) -> None:
    controller, terminal = pty.openpty()  # stdin is a terminal, as when typed in a shell
    process = subprocess.Popen(tinycontext_command(), stdin=terminal, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=cli_env(tmp_path))
    os.close(terminal)
    assert process.stderr is not None and process.stdout is not None
    try:
        stderr = _read_until(process.stderr.fileno(), b"\n", timeout=60).decode()
    finally:
        process.terminate()
        out, rest = process.communicate(timeout=30)
        os.close(controller)
    stderr += rest.decode()
    lines = [line for line in stderr.splitlines() if HINT in line]
    assert len(lines) == 1, stderr
    assert "tinycontext setup" in lines[0] and "tinycontext --help" in lines[0]
    assert out == b""  # stdout belongs to the protocol, even here


def test_stdio_from_a_client_pipe_prints_no_hint(tmp_path: Path) -> None:
    done = subprocess.run(tinycontext_command(), input="", capture_output=True, text=True,
                          env=cli_env(tmp_path), timeout=60)
    assert done.returncode == 0, done.stderr
    assert HINT not in done.stderr and done.stdout == ""


BAD_HOSTED = {"TINYCONTEXT_TENANCY": "proxy-header"}  # and none of its required settings


def _one_clear_message(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode != 0
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("tinycontext: hosted mode"), done.stderr
    headline, *problems = done.stderr.strip().splitlines()
    assert headline.endswith("refused to start:")  # then one line per problem, nothing else
    assert problems and all(line.startswith("  - ") for line in problems), done.stderr
    assert "TINYCONTEXT_TENANT_SECRET" in done.stderr and done.stdout == ""


@pytest.mark.parametrize("path", ["tinycontext.rest:app", "tinycontext.adapters.rest_api:app"])
def test_uvicorn_import_path_with_bad_hosted_settings_prints_one_message(
        tmp_path: Path, path: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "uvicorn", path, "--port", str(free_port())],
        capture_output=True, text=True, env=cli_env(tmp_path, **BAD_HOSTED), timeout=60)
    _one_clear_message(done)


@pytest.mark.parametrize("command", ["serve", "rest"])
def test_cli_servers_with_bad_hosted_settings_print_one_message(tmp_path: Path,
                                                                command: str) -> None:
    done = subprocess.run([*tinycontext_command(), command, "--port", str(free_port())],
                          capture_output=True, text=True, env=cli_env(tmp_path, **BAD_HOSTED),
                          timeout=60)
    _one_clear_message(done)
    assert done.returncode == 2


def test_uvicorn_import_path_with_a_misspelt_setting_names_it(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "uvicorn", "tinycontext.adapters.rest_api:app",
         "--port", str(free_port())],
        capture_output=True, text=True, timeout=60,
        env=cli_env(tmp_path, TINYCONTEXT_RECAL_TOP_K="5"))
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines() == [
        "tinycontext: unknown environment variable TINYCONTEXT_RECAL_TOP_K; check its spelling."]


def test_missing_server_extra_hint_names_this_checkout_only(tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parents[2]
    script = ("import sys; sys.modules['mcp'] = None\n"
              "from tinycontext.entry.cli import main\nraise SystemExit(main(['mcp']))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=cli_env(tmp_path), timeout=60)
    lines = done.stderr.splitlines()
    assert done.returncode == 2 and len(lines) == 2, done.stderr
    assert lines[1].endswith(f"pip install -e '{repo}[server]'")
    # Never the PyPI name: until a release it fetches an older, different codebase.
    assert "tinysuite-context" not in done.stderr
