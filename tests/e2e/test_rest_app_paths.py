"""The REST app's import paths: `tinycontext.rest:app` (canonical), and the earlier
`tinycontext.adapters.rest_api:app`, which users' `uvicorn` commands name, serve the one app."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.e2e.servers import cli_env, free_port, wait_for_health

pytestmark = pytest.mark.slow


def test_every_rest_import_path_gives_the_same_app(tmp_path: Path) -> None:
    code = (
        "import tinycontext.rest as canonical\n"
        "import tinycontext.adapters.rest_api as earlier\n"
        "from fastapi import FastAPI\n"
        "assert isinstance(canonical.app, FastAPI)\n"
        "assert canonical.app is earlier.app\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], env=cli_env(tmp_path),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_earlier_release_path_runs_under_uvicorn(tmp_path: Path) -> None:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "tinycontext.adapters.rest_api:app",
         "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
        env=cli_env(tmp_path), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    try:
        wait_for_health(f"http://127.0.0.1:{port}/health", process=process)
        assert httpx.get(f"http://127.0.0.1:{port}/health").json()["status"] == "ok"
    finally:
        process.terminate()
        process.wait(timeout=15)


def test_uvicorn_prints_no_access_log_with_queries(tmp_path: Path) -> None:
    """uvicorn's access log would print every request line: queries and session ids."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "tinycontext.rest:app", "--host", "127.0.0.1",
         "--port", str(port)],  # uvicorn's defaults: access log on, level info
        env=cli_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        wait_for_health(base + "/health", process=process)
        saved = httpx.post(base + "/save_memories", timeout=120, json={
            "session_id": "private-session-7", "memories": [{"content": "Quartz rota."}]})
        assert saved.status_code == 200, saved.text
        asked = httpx.get(base + "/recall_memories", timeout=120,
                          params={"query": "secret quartz question", "session_id":
                                  "private-session-7"})
        assert asked.status_code == 200
    finally:
        process.terminate()
        output, _ = process.communicate(timeout=30)
    assert "Uvicorn running" in output  # uvicorn's own info lines still show
    for private in ("quartz", "private-session-7", "/recall_memories"):
        assert private not in output, output
