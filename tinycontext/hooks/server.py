"""The memory service: one process per store that keeps the model loaded and answers the
hooks over an owner-only Unix socket, one JSON line per request.

Started on demand by a hook (detached) or by `tinycontext service run`; a lock file held for
its whole life makes a second start for the same store exit at once. It stops by itself after
`service_idle_minutes` without a request, on `tinycontext service stop`, or on SIGTERM.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import signal
import socket
import socketserver
import struct
import threading
import time
from collections.abc import Callable, Mapping
from typing import IO, Any

from tinycontext.hooks.locate import Place, locate, service_environment

log = logging.getLogger("tinycontext.service")
MAX_REQUEST = 1 << 20
Handler = Callable[[dict[str, Any]], dict[str, Any]]


def _peer_is_owner(sock: socket.socket) -> bool:
    """On Linux, the connecting process must run as this user (the folder is 0700 anyway)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return True
    raw = sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    _, uid, _ = struct.unpack("3i", raw)
    return bool(uid == os.getuid())


class _Server(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True

    def __init__(self, path: str, answer: Handler) -> None:
        self.answer = answer
        self.last_request = time.monotonic()
        self.busy = threading.Lock()  # one request at a time against the store
        old = os.umask(0o177)  # the socket file is created owner-only (0600)
        try:
            super().__init__(path, _Request)
        finally:
            os.umask(old)


class _Request(socketserver.StreamRequestHandler):
    server: _Server

    def handle(self) -> None:
        if not _peer_is_owner(self.connection):
            return
        line = self.rfile.readline(MAX_REQUEST)
        try:
            request = json.loads(line)
            if not isinstance(request, dict):
                raise ValueError("not an object")
        except ValueError:
            reply: dict[str, Any] = {"ok": False, "error": "bad_request"}
        else:
            with self.server.busy:
                self.server.last_request = time.monotonic()
                reply = self.server.answer(request)
                self.server.last_request = time.monotonic()
        self.wfile.write(json.dumps(reply).encode() + b"\n")
        if request_is_stop(reply):
            threading.Thread(target=self.server.shutdown, daemon=True).start()


def request_is_stop(reply: Mapping[str, Any]) -> bool:
    return bool(reply.get("stopping"))


def _watch_idle(server: _Server, idle_seconds: float, stopped: threading.Event) -> None:
    while not stopped.wait(min(5.0, idle_seconds / 4)):
        if time.monotonic() - server.last_request > idle_seconds and not server.busy.locked():
            log.info("idle for %.0f s: stopping", idle_seconds)
            server.shutdown()
            return


def _take_lock(place: Place) -> IO[str] | None:
    handle = open(place.lock, "a")  # noqa: SIM115 - held for the process's life
    os.chmod(place.lock, 0o600)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return None
    return handle


def run_service(environ: Mapping[str, str]) -> int:
    """Serve this environment's store until idle, stopped or terminated (exit 0).

    The socket is bound before the model loads: hooks that arrive meanwhile wait for their
    answer (within their own deadline) instead of starting more services."""
    env = service_environment(environ)
    place = locate(env)
    lock = _take_lock(place)
    if lock is None:
        log.info("a service for this store is already running")
        return 0
    from tinycontext.hooks.responder import Responder, open_responder

    ready = threading.Event()
    holder: list[Responder] = []

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        if not ready.is_set() and request.get("op") in ("status", "stop"):
            # Still loading: status and stop must not wait for the model.
            return {"ok": True, "pid": os.getpid(), "loading": True,
                    "stopping": request.get("op") == "stop"}
        ready.wait()
        return holder[0].answer(request)

    with contextlib.suppress(FileNotFoundError):
        os.unlink(place.socket)  # a stale socket of a service that died (we hold the lock)
    server = _Server(place.socket, answer)
    serving = threading.Thread(target=server.serve_forever, args=(0.5,), daemon=True)
    serving.start()
    stopped = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: threading.Thread(
        target=server.shutdown, daemon=True).start())
    log.info("memory service %s listening (pid %d)", place.key, os.getpid())
    try:
        holder.append(open_responder(env, place))
        ready.set()
        threading.Thread(target=_watch_idle, args=(server, holder[0].idle_seconds, stopped),
                         daemon=True).start()
        holder[0].warm()
        while serving.is_alive():
            serving.join(1.0)
    finally:
        stopped.set()
        if serving.is_alive():
            server.shutdown()
        signal.signal(signal.SIGTERM, previous)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(place.socket)
        server.server_close()
        if holder:
            holder[0].close()
        lock.close()
    return 0
