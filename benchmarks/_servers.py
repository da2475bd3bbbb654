"""A `tinycontext serve|rest` process on a free loopback port, for the benchmark scripts."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _env(db: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TINYCONTEXT_", "OTEL_"))}
    env.update(TINYCONTEXT_MEMORY_DB_PATH=str(db),
               TINYCONTEXT_CONFIG_FILE=str(db.parent / "no-config.json"))
    return env


def _command() -> list[str]:
    script = Path(sys.executable).parent / "tinycontext"
    return [str(script)] if script.exists() else [sys.executable, "-m", "tinycontext"]


class Server:
    """`tinycontext serve|rest` on a free loopback port, stopped on exit."""

    def __init__(self, kind: str, db: Path, extra: list[str] | None = None) -> None:
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [*_command(), kind, "--port", str(self.port), *(extra or [])], env=_env(db),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )

    def __enter__(self) -> Server:
        import httpx

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.base + "/health", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                time.sleep(0.05)
        raise SystemExit("server did not start")

    def __exit__(self, *exc: object) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)
