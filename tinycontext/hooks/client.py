"""The hook side of the memory service: one JSON request over the owner-only Unix socket,
starting the service (detached) when none answers. Standard library only, and every call has a
deadline: a hook that cannot get an answer in time gives the agent nothing rather than a wait.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from collections.abc import Mapping
from typing import Any

from tinycontext.hooks.locate import Place, UnsafeFolder, locate, service_environment

MAX_REPLY = 1 << 20
POLL_SECONDS = 0.02


class ServiceUnavailable(Exception):
    """No answer from the memory service; `code` is a stable word for the log."""

    def __init__(self, code: str, detail: str = "") -> None:
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code = code


def _open_private(path: str) -> int:
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)


def start_service(place: Place, env: Mapping[str, str]) -> None:
    """Start `tinycontext service run` in its own session, detached from the hook's pipes (a
    client waits for a hook's stdout to close; the service must not hold it)."""
    import subprocess

    log = _open_private(place.log)
    try:
        subprocess.Popen(  # noqa: S603 - our own interpreter and module
            [sys.executable, "-m", "tinycontext", "service", "run"],
            env=dict(env), cwd="/", stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=log, start_new_session=True, close_fds=True,
        )
    finally:
        os.close(log)


def _connect(place: Place, deadline: float) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(max(0.001, deadline - time.monotonic()))
    try:
        sock.connect(place.socket)
    except BaseException:
        sock.close()
        raise
    return sock


def _exchange(sock: socket.socket, request: Mapping[str, Any], deadline: float) -> dict[str, Any]:
    sock.sendall(json.dumps(request).encode() + b"\n")
    chunks: list[bytes] = []
    size = 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise ServiceUnavailable("timeout", "no reply in time")
        sock.settimeout(left)
        chunk = sock.recv(65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if chunk.endswith(b"\n") or size > MAX_REPLY:
            break
    try:
        reply = json.loads(b"".join(chunks))
    except ValueError:
        raise ServiceUnavailable("bad_reply", "the service's reply was not JSON") from None
    if not isinstance(reply, dict):
        raise ServiceUnavailable("bad_reply", "the service's reply was not an object")
    return reply


def call(request: Mapping[str, Any], environ: Mapping[str, str], timeout: float,
         start: bool = True) -> dict[str, Any]:
    """Send one request to this environment's service (starting it if `start`) and return its
    reply; ServiceUnavailable once `timeout` seconds have passed or on any failure."""
    deadline = time.monotonic() + timeout
    env = service_environment(environ)
    try:
        place = locate(env)
    except (UnsafeFolder, OSError) as exc:
        raise ServiceUnavailable("unsafe_folder", str(exc)) from None
    started = False
    while True:
        try:
            sock = _connect(place, deadline)
            break
        except (FileNotFoundError, ConnectionRefusedError):
            if not start:
                raise ServiceUnavailable("not_running") from None
            if not started:
                start_service(place, env)
                started = True
            if time.monotonic() + POLL_SECONDS >= deadline:
                raise ServiceUnavailable("timeout", "the service did not start in time") from None
            time.sleep(POLL_SECONDS)
        except (TimeoutError, OSError) as exc:
            raise ServiceUnavailable("connect_failed", type(exc).__name__) from None
    try:
        with sock:
            return _exchange(sock, request, deadline)
    except (TimeoutError, OSError) as exc:
        raise ServiceUnavailable("timeout" if isinstance(exc, TimeoutError) else "io_error",
                                 type(exc).__name__) from None
