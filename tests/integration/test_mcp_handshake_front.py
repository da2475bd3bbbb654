"""The stdio front (adapters/mcp/stdio_front.py) answers the handshake as the SDK would, and
before anything heavy is loaded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.servers import cli_env, tinycontext_command
from tinycontext.adapters.mcp.snapshot import build_snapshot, render
from tinycontext.adapters.mcp.stdio_front import SNAPSHOT_FILE

HELLO = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "front-test", "version": "0"}}}


def test_the_recorded_answers_are_the_sdks() -> None:
    recorded = Path(SNAPSHOT_FILE).read_text(encoding="utf-8")
    assert recorded == render(build_snapshot()), (
        "handshake.json is stale: run python -m tinycontext.adapters.mcp.snapshot")


def _fingerprint_with(monkeypatch: pytest.MonkeyPatch, distribution: str, version: str) -> str:
    """The fingerprint were `distribution` installed at `version` instead."""
    from tinycontext.adapters.mcp import stdio_front

    listdir = os.listdir

    def installed(path: str) -> list[str]:
        return [f"{distribution}-{version}.dist-info"
                if name.startswith(f"{distribution}-") and name.endswith(".dist-info") else name
                for name in listdir(path)]

    monkeypatch.setattr(stdio_front.os, "listdir", installed)
    try:
        return stdio_front.code_fingerprint()
    finally:
        monkeypatch.undo()


@pytest.mark.parametrize("distribution", ["mcp", "mcp_types", "pydantic", "pydantic_core"])
def test_a_newer_release_of_the_same_major_version_keeps_the_answers(
        monkeypatch: pytest.MonkeyPatch, distribution: str) -> None:
    from tinycontext.adapters.mcp.stdio_front import code_fingerprint

    # Users install whatever release is current: the front must not turn off for a minor one.
    current = code_fingerprint()
    assert _fingerprint_with(monkeypatch, distribution, "2.999.7") == current
    assert _fingerprint_with(monkeypatch, distribution, "3.0.0") != current


def test_the_front_imports_only_the_standard_library() -> None:
    code = ("import json, sys; import tinycontext.adapters.mcp.stdio_front, tinycontext.entry.cli; "
            "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    loaded = set(json.loads(done.stdout))
    assert not loaded & {"mcp", "mcp_types", "pydantic", "pydantic_core", "pydantic_settings",
                         "anyio", "onnxruntime", "numpy", "sqlite3", "dependency_injector"}


def _send(process: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert process.stdin is not None
    process.stdin.write(json.dumps(message).encode() + b"\n")
    process.stdin.flush()


def _reply(process: subprocess.Popen[bytes]) -> dict[str, Any]:
    assert process.stdout is not None
    return dict(json.loads(process.stdout.readline()))


def _mapped(pid: int) -> str:
    return Path(f"/proc/{pid}/maps").read_text(encoding="utf-8", errors="replace")


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc/<pid>/maps")
def test_the_handshake_is_answered_before_the_sdk_loads(tmp_path: Path) -> None:
    process = subprocess.Popen(tinycontext_command(), env=cli_env(tmp_path),
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    try:
        _send(process, HELLO)
        hello = _reply(process)
        # Until the tools are listed nothing else loads: neither pydantic's compiled core (the
        # MCP SDK and the settings need it) nor onnxruntime is in the process yet.
        maps = _mapped(process.pid)
        assert "_pydantic_core" not in maps and "onnxruntime" not in maps
        _send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        _send(process, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        tools = _reply(process)
        versions = json.loads(Path(SNAPSHOT_FILE).read_text(encoding="utf-8"))["versions"]
        assert hello["result"] == {"protocolVersion": "2025-06-18",
                                   **versions["2025-06-18"]["initialize"]}
        assert tools["result"] == versions["2025-06-18"]["tools/list"]
        # Then the SDK takes over: a tool call and a second listing come from it.
        _send(process, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "list_memories", "arguments": {}}})
        _send(process, {"jsonrpc": "2.0", "id": 4, "method": "tools/list"})
        answers = {m["id"]: m for m in (_reply(process), _reply(process))}
        assert not answers[3]["result"]["isError"]
        assert answers[4]["result"] == tools["result"]
    finally:
        assert process.stdin is not None
        process.stdin.close()
        code = process.wait(timeout=60)
    assert code == 0
    assert process.stderr is not None and process.stderr.read() == b""


def test_a_client_of_an_unknown_version_is_answered_by_the_sdk(tmp_path: Path) -> None:
    hello = {**HELLO, "params": {**HELLO["params"], "protocolVersion": "2099-01-01"}}
    done = subprocess.run(tinycontext_command(), env=cli_env(tmp_path), capture_output=True,
                          input=(json.dumps(hello) + "\n").encode(), timeout=120)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout.splitlines()[0])
    # The SDK's counter-offer: its newest handshake version.
    assert answer["result"]["protocolVersion"] == "2025-11-25"


def test_answers_recorded_for_other_code_are_not_used(tmp_path: Path) -> None:
    recorded = json.loads(Path(SNAPSHOT_FILE).read_text(encoding="utf-8"))
    stale = tmp_path / "handshake.json"
    stale.write_text(json.dumps({**recorded, "fingerprint": "recorded-for-other-code"}))
    code = ("import sys; from tinycontext.adapters.mcp.stdio_front import ClaimedStdio\n"
            f"with ClaimedStdio({str(stale)!r}) as front:\n"
            "    print(sorted(front._versions), front.inbox.get(timeout=30), file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60,
                          input=(json.dumps(HELLO) + "\n").encode())
    assert done.returncode == 0, done.stderr
    assert done.stdout == b""  # nothing answered from the stale file
    assert done.stderr.startswith(b"[] b'{") and b'"initialize"' in done.stderr  # for the SDK
