"""The curl examples of docs/reference/rest.md and the README, pasted in order into a shell,
against a real `tinycontext rest` on a fresh store: no error response anywhere."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.servers import served_process

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")]

REPO = Path(__file__).resolve().parents[2]
# Every curl fails the script on an HTTP error (--fail-with-body, set -e, pipefail) and ends
# its output with a newline, so each response is one line of the output.
PRELUDE = """set -euo pipefail
curl() { command curl --fail-with-body --show-error "$@"; echo; }
"""


def _shell_blocks(text: str) -> list[str]:
    return re.findall(r"```(?:sh|bash)\n(.*?)```", text, re.S)


def _curl_lines(block: str) -> list[str]:
    """The block's commands (continuation lines joined) that call curl."""
    commands = block.replace("\\\n", " ").splitlines()
    return [c for c in commands if "curl " in c]


def _run(script: str, port: int, cwd: Path) -> list[str]:
    done = subprocess.run(["bash", "-c", PRELUDE + script.replace("localhost:8001",
                                                                  f"localhost:{port}")],
                          capture_output=True, text=True, timeout=120, cwd=cwd)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    for line in lines:
        assert "detail" not in json.loads(line), line
    return lines


def test_rest_md_examples_work_as_pasted(tmp_path: Path) -> None:
    doc = (REPO / "docs" / "reference" / "rest.md").read_text()
    blocks = [b for b in _shell_blocks(doc) if "curl " in b]
    assert len(blocks) >= 2
    with served_process(tmp_path, "rest") as (base, _):
        port = int(base.rsplit(":", 1)[1])
        answers = _run("\n".join(blocks), port, tmp_path)
    results = [json.loads(line) for line in answers]
    saved, recalled = results[0], results[1]
    assert len(saved["saved"]) == 2
    assert recalled["memories"][0]["content"] == "Billing runs on PostgreSQL since March."
    assert results[-1]["deleted"] is True and "restored" in results[-1]


def test_readme_rest_examples_work_as_pasted(tmp_path: Path) -> None:
    readme = (REPO / "README.md").read_text()
    section = readme.split("## REST API", 1)[1].split("\n## ", 1)[0]
    commands = [c for b in _shell_blocks(section) for c in _curl_lines(b)]
    assert len(commands) >= 2
    with served_process(tmp_path, "rest") as (base, _):
        answers = _run("\n".join(commands), int(base.rsplit(":", 1)[1]), tmp_path)
    assert len(answers) == len(commands)
    assert "PostgreSQL" in json.loads(answers[-1])["memories"][0]["content"]
