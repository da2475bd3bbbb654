"""The first moments of MCP on stdio: the handshake is answered while the server loads.

Clients give a freshly spawned stdio server little time to answer `initialize` and
`tools/list` (Codex CLI leaves a server that answers late without tools for the whole
session), while importing the MCP SDK, the settings, the store and the model takes about a
second of CPU. So the process claims stdin and stdout first, with the standard library only,
and a reader thread answers those two requests from handshake.json: the SDK's own answers,
per protocol version, recorded by snapshot.py and checked against the SDK by a test.
Everything else is queued, in the order read, for the SDK server once it runs (stdio.py):
it is first handed the client's `initialize` again under an id of its own, so its session
starts as the client's did, and its answer to that copy is dropped.

This module imports nothing outside the standard library: it runs before anything heavy.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import sys
import threading
from pathlib import Path
from types import TracebackType
from typing import Any

log = logging.getLogger("tinycontext.mcp")

SNAPSHOT_FILE = str(Path(__file__).with_name("handshake.json"))
REPLAYED_ID = "tinycontext-replayed-initialize"


# What the recorded answers depend on: the tools and their descriptions, the types and limits
# of their parameters, the version (serverInfo), and the SDK that serialises them. Answers
# recorded for other code are not used (the SDK answers, later): they would hide a tool's new
# parameters. The test that compares the file with the SDK's answers catches what this misses.
# Of the SDK and pydantic only the major version counts: users install whatever release is
# current, and keying on the exact release turned the front off for nearly every install
# (Codex then offered no tools). Within a major version the answers have differed in trivia
# only (an older SDK adds an empty `experimental` capability); CI, which installs the newest
# releases, compares the recording with their answers.
FINGERPRINTED_MODULES = (
    "tinycontext.adapters.mcp.server", "tinycontext.adapters.mcp.prompts",
    "tinycontext.app.inputs", "tinycontext.domain.labels", "tinycontext.domain.limits",
    "tinycontext.domain.memory", "tinycontext.version",
)
FINGERPRINTED_DISTRIBUTIONS = ("mcp", "mcp_types", "pydantic", "pydantic_core")


def code_fingerprint() -> str:
    """A digest of the code and the library major versions the handshake answers come from."""
    import hashlib
    from importlib.util import find_spec

    digest = hashlib.sha256()
    for module in FINGERPRINTED_MODULES:
        spec = find_spec(module)  # imports the parent packages only: light ones
        if spec is not None and spec.origin:
            digest.update(module.encode() + b"\0" + Path(spec.origin).read_bytes() + b"\0")
    sdk = find_spec("mcp")
    if sdk is not None and sdk.origin:
        site = Path(sdk.origin).parent.parent
        for name in sorted(os.listdir(site)):
            distribution, _, version = name.removesuffix(".dist-info").partition("-")
            if (name.endswith(".dist-info")
                    and distribution.lower() in FINGERPRINTED_DISTRIBUTIONS):
                major = version.split(".")[0]
                digest.update(f"{distribution.lower()}-{major}".encode() + b"\0")
    return digest.hexdigest()


def _claim(fd: int, diversion: int) -> int:
    """A private copy of a standard descriptor; the descriptor itself then points at
    `diversion`, so a stray print or read by any library misses the protocol stream."""
    if os.name == "posix":
        import fcntl

        private = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    else:  # pragma: no cover - POSIX is where the stdio server is run
        private = os.dup(fd)
    os.dup2(diversion, fd)
    os.close(diversion)
    return private


class Wire:
    """The client's end for answers: whole lines, one writer at a time. Once the client
    has closed it, answers are dropped (counted) instead of failing the server."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._lock = threading.Lock()
        self.closed = False
        self.dropped = 0

    def send(self, data: bytes) -> None:
        with self._lock:
            if not self.closed:
                try:
                    view = memoryview(data)
                    while view:
                        view = view[os.write(self._fd, view):]
                    return
                except OSError:  # EPIPE: the client closed its end, an ordinary way to go
                    self.closed = True
                    log.info("the client closed stdout; answers from here on are dropped")
            self.dropped += 1


def _rpc_line(request_id: Any, result: Any) -> bytes:
    return (json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result},
                       ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def _acceptable_hello(params: Any, versions: dict[str, Any]) -> str | None:
    """The protocol version of an `initialize` the SDK would accept as sent, else None."""
    if not isinstance(params, dict):
        return None
    version, client = params.get("protocolVersion"), params.get("clientInfo")
    if (version not in versions or not isinstance(params.get("capabilities"), dict)
            or not isinstance(client, dict) or not isinstance(client.get("name"), str)
            or not isinstance(client.get("version"), str)):
        return None
    return str(version)


class StdioFront:
    """Reads the client's messages, answers the handshake, queues the rest for the SDK."""

    def __init__(self, wire_in: int, wire: Wire, snapshot: dict[str, Any]) -> None:
        self.wire = wire
        self._in = wire_in
        self._versions: dict[str, Any] = snapshot["versions"]
        self._version: str | None = None  # the protocol version of a handshake answered here
        self._sdk_running = False
        self._replay_pending = False
        self.inbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._needed = threading.Event()  # the handshake is over, or the SDK has work
        if not self._versions:  # nothing to answer here: the SDK is needed at once
            self._needed.set()
        self._thread = threading.Thread(target=self._read, name="tinycontext-stdio-front",
                                        daemon=True)  # may block on a terminal: never joined

    def start(self) -> StdioFront:
        self._thread.start()
        return self

    def _read(self) -> None:
        try:
            with open(self._in, "rb", closefd=False) as stream:
                for line in iter(stream.readline, b""):
                    self._route(line)
        except (OSError, ValueError) as exc:
            log.debug("reading stdin ended: %s", exc)
        finally:
            self.end_input()

    def _route(self, line: bytes) -> None:
        if not self._sdk_running and self._answered(line):
            return
        self.inbox.put(line)
        if line.strip() and b'"notifications/initialized"' not in line:
            self._needed.set()

    def wait_for_handshake(self, seconds: float) -> None:
        """Until the tools are listed, the SDK has a request waiting, input ended, or
        `seconds` passed: loading the rest meanwhile would slow the answers down on a busy
        machine (both want the same CPU), and the first tool call waits for it anyway."""
        self._needed.wait(seconds)

    def _answered(self, line: bytes) -> bool:
        """Answer `initialize` / `tools/list` here when the SDK would answer the same."""
        try:
            message = json.loads(line)
        except ValueError:
            return False
        if not isinstance(message, dict) or "id" not in message:
            return False
        method, params = message.get("method"), message.get("params")
        if method == "initialize" and self._version is None:
            version = _acceptable_hello(params, self._versions)
            if version is None:
                return False
            self._version = version
            self._replay_pending = True
            self.inbox.put(json.dumps({**message, "id": REPLAYED_ID}).encode() + b"\n")
            answer = {"protocolVersion": version, **self._versions[version]["initialize"]}
            self.wire.send(_rpc_line(message["id"], answer))
            return True
        if (method == "tools/list" and self._version is not None
                and not (isinstance(params, dict) and params.get("cursor"))):
            self.wire.send(_rpc_line(message["id"], self._versions[self._version]["tools/list"]))
            self._needed.set()
            return True
        return False

    def sdk_running(self) -> None:
        """From now on the SDK answers everything (it has been handed the queue)."""
        self._sdk_running = True

    def dropped_by_front(self, line: bytes) -> bool:
        """True for the SDK's answer to the replayed `initialize` (the client has its own)."""
        if not self._replay_pending or REPLAYED_ID.encode() not in line:
            return False
        try:
            message = json.loads(line)
        except ValueError:
            return False
        if not isinstance(message, dict) or message.get("id") != REPLAYED_ID:
            return False
        self._replay_pending = False
        if "error" in message:
            log.warning("the MCP SDK refused the client's initialize: %s", message["error"])
        return True

    def end_input(self) -> None:
        """End of the client's input as the SDK sees it (stdin closed, or a stop signal)."""
        self.inbox.put(None)
        self._needed.set()


class ClaimedStdio:
    """`with ClaimedStdio() as front:` claims fd 0/1 and answers the handshake at once."""

    def __init__(self, snapshot_file: str = SNAPSHOT_FILE) -> None:
        self._snapshot_file = snapshot_file
        self._saved: list[tuple[int, int]] = []
        self.front: StdioFront | None = None

    def __enter__(self) -> StdioFront:
        with open(self._snapshot_file, encoding="utf-8") as handle:
            snapshot = json.load(handle)
        if snapshot.get("fingerprint") != code_fingerprint():
            log.debug("handshake.json was recorded for other code; the SDK answers")
            snapshot = {"versions": {}}
        sys.stdout.flush()
        wire_in = _claim(0, os.open(os.devnull, os.O_RDONLY))
        wire_out = _claim(1, os.dup(2))
        self._saved = [(wire_in, 0), (wire_out, 1)]
        self.front = StdioFront(wire_in, Wire(wire_out), snapshot).start()
        return self.front

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.front is not None:
            self.front.end_input()
        sys.stdout.flush()
        for private, fd in self._saved:  # the descriptors point at the client again
            os.dup2(private, fd)
