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
