"""Helpers for the encryption tests: a process whose SQLite is SQLCipher, planted memories,
and a scan of files for them."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

HAS_EXTRA = all(importlib.util.find_spec(m) for m in ("sqlcipher3", "cryptography"))
needs_extra = pytest.mark.skipif(not HAS_EXTRA, reason="the `encryption` extra is not installed")


def sqlcipher_process() -> bool:
    from tinycontext.adapters.sqlite.driver import uses_sqlcipher

    return uses_sqlcipher()


def require_sqlcipher_process() -> None:
    """Skip unless this test process uses SQLCipher as its SQLite (one build per process):
    .ci/run runs these with TINYCONTEXT_TEST_SQLCIPHER=1 (tests/conftest.py)."""
    if not sqlcipher_process():
        pytest.skip("this process's SQLite is not SQLCipher: run with "
                    "TINYCONTEXT_TEST_SQLCIPHER=1 (as .ci/run does)")


def planted(i: int) -> tuple[str, str, str]:
    """The i-th planted content marker, tag and session id (each unique, greppable)."""
    return f"plantedcontent{i:04d}zq", f"plantedtag{i:04d}zq", f"plantedsession{i:04d}zq"


MARKER = re.compile(rb"planted(?:content|tag|session)(\d{4})zq")


def found_in(folder: Path, count: int) -> dict[str, list[str]]:
    """Which files under `folder` hold any of the first `count` planted markers (raw bytes,
    every file), with up to five of the markers found."""
    hits: dict[str, list[str]] = {}
    for item in folder.rglob("*"):
        if not item.is_file():
            continue
        found = sorted({m.group(0).decode() for m in MARKER.finditer(item.read_bytes())
                        if int(m.group(1)) < count})
        if found:
            hits[str(item)] = found[:5]
    return hits


REPO = Path(__file__).resolve().parents[1]


def fill_encrypted(db: Path, key_text: str, count: int) -> None:
    """A new encrypted store at `db` of `count` planted memories, written by a child process
    whose SQLite is SQLCipher (tests/integration/encryption_child.py)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TINYCONTEXT_", "OTEL_"))}
    env.update(TINYCONTEXT_ENCRYPTION_KEY=key_text, PYTHONPATH=str(REPO))
    subprocess.run([sys.executable, "-m", "tests.integration.encryption_child", "fill", str(db),
                    str(count)], env=env, cwd=REPO, check=True, capture_output=True, timeout=300)
    assert db.read_bytes()[:16] != b"SQLite format 3\x00"


def smash_encrypted(db: Path, page: int, start: int = 0) -> None:
    """Random bytes over one page of an encrypted store file (SQLCipher's 4096-byte pages),
    from `start` within it."""
    with db.open("r+b") as f:
        f.seek((page - 1) * 4096 + start)
        f.write(os.urandom(4096 - start))
