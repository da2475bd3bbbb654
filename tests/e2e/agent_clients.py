"""What the real agent-client tests share: the client installed with npm into a cache folder,
a temporary home and project configured by `tinycontext setup`, a warm memory service, a
loopback stand-in model server, and the store's contents."""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.e2e.servers import cli_env, short_runtime_dir, tinycontext_command

MEMORY = "The billing service's staging database listens on port 5433."


def npm_client(package: str, binary: str, prefix_variable: str, folder: str) -> str:
    """The client's executable, installed into $prefix_variable (.ci/run sets it) or a temp
    folder on first use; the test skips only where npm is missing."""
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip(f"Node.js and npm are needed to install {package}; .ci/run installs them")
    prefix = Path(os.environ.get(prefix_variable) or Path(tempfile.gettempdir()) / folder)
    return npm_install(prefix, package, binary)


def npm_install(prefix: Path, package: str, binary: str) -> str:
    """`binary` from `package`, installed into `prefix` unless already there. Test processes
    running side by side (pytest -n) share the prefix: one installs while the others wait,
    since two npm installs into one folder undo each other's work."""
    path = prefix / "node_modules" / ".bin" / binary
    if path.exists():
        return str(path)
    prefix.mkdir(parents=True, exist_ok=True)
    with open(prefix / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.exists():
            done = subprocess.run(["npm", "install", "--prefix", str(prefix), "--no-audit",
                                   "--no-fund", "--silent", package],
                                  capture_output=True, text=True, timeout=600)
            if done.returncode != 0 or not path.exists():
                raise RuntimeError(f"npm could not install {package}: {done.stderr[-2000:]}")
    return str(path)


@contextmanager
def configured_project(tmp_path: Path, client: str, drop: tuple[str, ...],
                       **variables: str) -> Iterator[tuple[Path, dict[str, str]]]:
    """A project folder set up by `tinycontext setup <client> --scope project` under a
    temporary home, with the memory service warm (a cold hook may give up while the model
    loads); the service is stopped afterwards."""
    home, folder = tmp_path / "home", tmp_path / "shop-frontend"
    for path in (home, folder):
        path.mkdir(mode=0o700)
    with short_runtime_dir() as run:
        env = cli_env(tmp_path, HOME=str(home), XDG_RUNTIME_DIR=str(run),
                      XDG_CONFIG_HOME=str(home / ".config"), **variables)
        for name in [n for n in env if n.startswith(drop)]:
            del env[name]
        command = tinycontext_command()
        done = subprocess.run([*command, "setup", client, "--scope", "project"], cwd=folder,
                              env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        warm = subprocess.run([*command, "context", "warm up"], env=env, capture_output=True,
                              text=True, timeout=120)
        assert warm.returncode == 0, warm.stderr
        try:
            yield folder, env
        finally:
            subprocess.run([*command, "service", "stop"], env=env, capture_output=True,
                           timeout=60)


def save(env: dict[str, str], content: str) -> None:
    """Save a memory into the environment's store through the Python API."""
    code = ("import sys\nfrom tinycontext import TinyContextConfig, build_service\n"
            "service = build_service(TinyContextConfig(memory_db_path=sys.argv[2], "
            "models_dir=sys.argv[3]))\nservice.save([{'content': sys.argv[1]}])\n"
            "service.close()\n")
    done = subprocess.run([sys.executable, "-c", code, content,
                           env["TINYCONTEXT_MEMORY_DB_PATH"], env["TINYCONTEXT_MODELS_DIR"]],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def stored(env: dict[str, str]) -> list[str]:
    done = subprocess.run([*tinycontext_command(), "export", "--no-embeddings"], env=env,
                          capture_output=True, text=True, timeout=120)
    return [json.loads(line)["content"] for line in done.stdout.splitlines()]


@contextmanager
def loopback(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """The base URL of `handler` served on a free loopback port, for the block's duration.

    The URL ends in a random path that every request must start with: a client process left
    over from an earlier test (its background requests outlive it) may reach a port the OS
    hands out again, and must not be taken for this test's client."""
    prefix = "/" + secrets.token_hex(8)

    class Scoped(handler):  # type: ignore[valid-type, misc]
        def parse_request(self) -> bool:
            if not super().parse_request():
                return False
            if not self.path.startswith(prefix + "/"):
                self.close_connection = True
                self.send_error(404, "not this test's stand-in")
                return False
            self.path = self.path[len(prefix):]
            return True

    server = ThreadingHTTPServer(("127.0.0.1", 0), Scoped)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}{prefix}"
    finally:
        server.shutdown()
        server.server_close()
