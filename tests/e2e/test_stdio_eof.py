"""`tinycontext` on stdio answers what it was asked even when stdin closes right away."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.servers import cli_env, run_cli, tinycontext_command

pytestmark = pytest.mark.slow


def _rpc(id_: int | None, method: str, params: dict[str, Any]) -> str:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if id_ is not None:
        message["id"] = id_
    return json.dumps(message) + "\n"


def test_requests_written_before_stdin_closes_are_all_answered(tmp_path: Path) -> None:
    memories = [{"content": f"Release {i} of the billing service shipped on day {i} with "
                            f"ticket BILL-{1000 + i} closed."} for i in range(150)]
    script = "".join([
        _rpc(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                               "clientInfo": {"name": "pipe", "version": "0"}}),
        _rpc(None, "notifications/initialized", {}),
        _rpc(2, "tools/call", {"name": "save_memories", "arguments": {"memories": memories}}),
        _rpc(3, "tools/call", {"name": "recall_memories", "arguments": {"query": "BILL-1007"}}),
    ])
    # Everything written at once and stdin closed immediately (communicate closes it), while
    # the model is still loading: before the fix only the initialize answer came back.
    done = subprocess.run(tinycontext_command(), input=script, capture_output=True, text=True,
                          env=cli_env(tmp_path), timeout=180)
    assert done.returncode == 0, done.stderr
    answers = {m["id"]: m for m in map(json.loads, done.stdout.splitlines()) if "id" in m}
    assert set(answers) == {1, 2, 3}, done.stdout
    saved = answers[2]["result"]
    assert not saved["isError"] and len(json.loads(saved["content"][0]["text"])["saved"]) == 150
    assert not answers[3]["result"]["isError"]
    exported = run_cli(tmp_path, "export", "--no-embeddings")
    assert len(exported.stdout.splitlines()) == 150  # and the save is really stored


def test_a_client_closing_both_pipes_mid_request_is_an_ordinary_end(tmp_path: Path) -> None:
    process = subprocess.Popen(tinycontext_command(), env=cli_env(tmp_path), text=True,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(_rpc(1, "initialize", {"protocolVersion": "2025-06-18",
                                               "capabilities": {},
                                               "clientInfo": {"name": "gone", "version": "0"}}))
    process.stdin.flush()
    assert json.loads(process.stdout.readline())["id"] == 1
    memories = [{"content": f"Invoice {i} of the ledger migration was paid on day {i}."}
                for i in range(40)]
    process.stdin.write(_rpc(None, "notifications/initialized", {})
                        + _rpc(2, "tools/call", {"name": "save_memories",
                                                 "arguments": {"memories": memories}}))
    process.stdin.flush()
    # The client goes while the save runs (the model is still loading): both pipes closed.
    process.stdin.close()
    process.stdout.close()
    assert process.wait(timeout=180) == 0
    assert process.stderr is not None
    stderr = process.stderr.read()
    assert len(stderr.splitlines()) <= 1, stderr
    exported = run_cli(tmp_path, "export", "--no-embeddings")
    assert len(exported.stdout.splitlines()) == 40  # the save it asked for is stored
