"""Python examples in the docs run as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), re.S)


@pytest.mark.parametrize("doc", ["docs/guides/custom_ports.md"])
def test_doc_examples_run(doc: str, tmp_path: Path) -> None:
    blocks = _blocks(REPO / doc)
    assert blocks
    for code in blocks:
        out = subprocess.run(
            [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120
        )
        assert out.returncode == 0, out.stderr
    assert "Staging deploys run at noon. 2026-01-01T12:00:00Z" in out.stdout
