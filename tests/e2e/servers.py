"""Helpers for transport tests: free ports, real uvicorn in a thread, `tinycontext` subprocesses.

Subprocesses never read a developer's own configuration: the config file points at a path
that does not exist and the database lives under the test's tmp_path.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def tinycontext_command() -> list[str]:
    """The installed console script next to this interpreter, else `python -m tinycontext`."""
    script = Path(sys.executable).parent / "tinycontext"
    if script.exists():
        return [str(script)]
    found = shutil.which("tinycontext")
    return [found] if found else [sys.executable, "-m", "tinycontext"]


def cli_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A clean environment for a CLI subprocess: no TINYCONTEXT_*/OTEL_* of the developer."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TINYCONTEXT_", "OTEL_"))}
    env["TINYCONTEXT_CONFIG_FILE"] = str(tmp_path / "no-such-config.json")
    env["TINYCONTEXT_MEMORY_DB_PATH"] = str(tmp_path / "store" / "memories.db")
    env["TINYCONTEXT_MODELS_DIR"] = str(tmp_path / "models")
    env.update(extra)
    return env


@contextmanager
def short_runtime_dir() -> Iterator[Path]:
    """An owner-only XDG_RUNTIME_DIR for the memory service's socket, removed afterwards. Not
    under tmp_path: a Unix socket's path holds at most 107 bytes, and pytest -n's per-worker
    folders make tmp_path too long for the socket inside it."""
    folder = Path(tempfile.mkdtemp(prefix="tc-run-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run_cli(tmp_path: Path, *args: str, stdin: str | None = None, timeout: float = 120,
            **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*tinycontext_command(), *args], input=stdin, capture_output=True, text=True,
        env=cli_env(tmp_path, **env), timeout=timeout,
    )


def wait_for_health(url: str, timeout: float = 30.0, process: Any = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"server exited early with {process.returncode}")
        try:
            if httpx.get(url, timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    raise TimeoutError(f"{url} did not answer within {timeout} s")


@contextmanager
def served_process(tmp_path: Path, command: str = "serve", *extra_args: str,
                   **env: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """`tinycontext serve|rest` on a free loopback port; yields (base URL, process)."""
    port = free_port()
    log = open(tmp_path / f"{command}-{port}.log", "w")  # noqa: SIM115
    process = subprocess.Popen(
        [*tinycontext_command(), command, "--host", "127.0.0.1", "--port", str(port), *extra_args],
        env=cli_env(tmp_path, **env), stdout=subprocess.PIPE, stderr=log, text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_health(base + "/health", process=process)
        yield base, process
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


@contextmanager
def uvicorn_thread(app: Any) -> Iterator[str]:
    """A real uvicorn server for `app` on a free loopback port, in a thread of this process."""
    import uvicorn

    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="test-uvicorn", daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)
