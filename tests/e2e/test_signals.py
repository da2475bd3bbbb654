"""Stopping the servers the way people and init systems do: Ctrl+C on a terminal, SIGINT and
SIGTERM. Each stops promptly and cleanly: exit 0, the store closed (SQLite removes the `-wal`
file when its last connection closes)."""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.e2e.servers import cli_env, free_port, tinycontext_command, wait_for_health

pytestmark = pytest.mark.slow
PROMPT = 20.0  # seconds: generous for a busy machine; a hang is what this catches


def _wait(process: subprocess.Popen[bytes], seconds: float = PROMPT) -> int | None:
    try:
        return process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return None


@pytest.mark.parametrize("command", ["serve", "rest"])
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_http_servers_stop_cleanly_on_a_signal(tmp_path: Path, command: str,
                                               signum: signal.Signals) -> None:
    port = free_port()
    process = subprocess.Popen(
        [*tinycontext_command(), command, "--host", "127.0.0.1", "--port", str(port)],
        env=cli_env(tmp_path), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    wait_for_health(base + "/health", timeout=60, process=process)
    if command == "rest":  # something written, so the store is open with its WAL
        saved = httpx.post(base + "/save_memories", timeout=120, json={
            "memories": [{"content": "The staging database moved to the Frankfurt region."}]})
        assert saved.status_code == 200, saved.text
    process.send_signal(signum)
    code = _wait(process)
    assert process.stderr is not None
    stderr = process.stderr.read().decode()
    assert code == 0, f"exit {code}: {stderr[-2000:]}"
    assert not (tmp_path / "store" / "memories.db-wal").exists()  # closed, not killed


def test_stdio_server_stops_on_sigterm(tmp_path: Path) -> None:
    process = subprocess.Popen(tinycontext_command(), env=cli_env(tmp_path),
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "signals", "version": "0"}}}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "list_memories", "arguments": {}}}
    for message in (hello, {"jsonrpc": "2.0", "method": "notifications/initialized"}, call):
        process.stdin.write(json.dumps(message).encode() + b"\n")
    process.stdin.flush()
    answers = [json.loads(process.stdout.readline()) for _ in range(2)]
    assert [a["id"] for a in answers] == [1, 2]  # serving, with stdin still open
    process.send_signal(signal.SIGTERM)
    assert _wait(process) == 0


def test_ctrl_c_stops_the_stdio_server_on_a_terminal(tmp_path: Path) -> None:
    import pty

    pid, terminal = pty.fork()
    if pid == 0:  # the child: `tinycontext` with the terminal as stdin, stdout and stderr
        # faulthandler: a hang below is ended with SIGABRT, which then prints every thread.
        os.execve(tinycontext_command()[0], tinycontext_command(),
                  cli_env(tmp_path, PYTHONFAULTHANDLER="1"))
    seen = b""
    deadline = time.monotonic() + 60
    while b"Ctrl+C quits" not in seen and time.monotonic() < deadline:
        if select.select([terminal], [], [], 1.0)[0]:
            seen += os.read(terminal, 4096)
    assert b"Ctrl+C quits" in seen, seen
    time.sleep(3.0)  # past the handshake head start: the server is loading or serving
    os.write(terminal, b"\x03")  # Ctrl+C: the terminal sends SIGINT to the foreground
    after = bytearray()  # what the server printed from Ctrl+C on, for a failure's message

    def read_terminal(seconds: float) -> None:
        if select.select([terminal], [], [], seconds)[0]:
            with contextlib.suppress(OSError):  # EIO once the child has gone
                after.extend(os.read(terminal, 65536))

    deadline = time.monotonic() + PROMPT
    status = None
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        read_terminal(0.2)
    else:
        os.kill(pid, signal.SIGABRT)  # the threads' stacks, then the end
        for _ in range(15):
            read_terminal(0.2)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(terminal)
        pytest.fail("Ctrl+C did not stop tinycontext on a terminal:\n"
                    + after.decode(errors="replace")[-6000:])
    read_terminal(0.0)
    os.close(terminal)
    output = after.decode(errors="replace")[-6000:]
    assert status is not None and os.WIFEXITED(status), (status, output)
    assert os.WEXITSTATUS(status) in (0, 130), output  # stopped (130: during start-up)
