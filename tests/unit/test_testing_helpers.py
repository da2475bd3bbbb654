"""tinycontext.testing: the public test doubles. The project's tests and benchmarks use the
same objects, and the docstring's example runs as written (no file, model or network)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import tinycontext.testing as testing
from tests import fakes

REPO = Path(__file__).resolve().parents[2]
NAMES = ["FixedClock", "HashEmbedder", "InMemoryStore", "WordTokenizer"]


def test_the_tests_use_the_public_doubles() -> None:
    assert sorted(testing.__all__) == NAMES
    for name in NAMES:
        assert getattr(fakes, name) is getattr(testing, name)


def test_benchmarks_import_nothing_from_the_tests() -> None:
    # Also the scripts benchmarks run in child processes, which are string literals.
    pattern = re.compile(r"^\s*(from\s+tests[.\s]|import\s+tests\b)", re.M)
    found = [f"{path.name}: {m.group(0).strip()}"
             for path in sorted((REPO / "benchmarks").glob("*.py"))
             for m in pattern.finditer(path.read_text(encoding="utf-8"))]
    assert found == []


def test_the_documented_example_runs_without_files(tmp_path: Path) -> None:
    doc = testing.__doc__ or ""
    example = [line for line in doc.splitlines() if line.startswith("    ")]  # the code block
    code = "\n".join(line.removeprefix("    ") for line in example)
    code += (
        "\nfrom tinycontext import MemoryInput\n"
        "service.save([MemoryInput(content='Billing runs on PostgreSQL.')], "
        "session_id='s')\n"
        "print(service.recall('Which database does billing use', "
        "session_id='s').memories[0].content)\n"
    )
    env = {"HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data"), "PATH": "/usr/bin"}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "Billing runs on PostgreSQL."
    assert list(tmp_path.iterdir()) == []
