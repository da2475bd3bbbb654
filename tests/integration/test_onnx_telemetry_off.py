"""onnxruntime's own usage telemetry stays off: since 1.29 it uploads events to Microsoft and
keeps a device id under ~/.cache/Microsoft unless ORT_DISABLE_TELEMETRY=1 is set before it
initialises. TinyContext sends nothing anywhere unless told to, and a device id baked into an
image (doctor runs at build) would be shared by every container started from it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

EMBED = """
import os, sys
from pathlib import Path
from tinycontext.adapters.models import create_embedder
embedder = create_embedder("balanced", Path(sys.argv[1]), cache_dir=Path(sys.argv[1]) / "prep")
assert len(embedder.embed(["one short text"])[0]) == 384 * 4  # float32 bytes
print(os.environ.get("ORT_DISABLE_TELEMETRY"))
"""


def _embed_in_child(tmp_path: Path, **extra: str) -> str:
    env = {k: v for k, v in os.environ.items()
           if k not in ("ORT_DISABLE_TELEMETRY", "XDG_CACHE_HOME")}
    env.update(HOME=str(tmp_path), **extra)
    done = subprocess.run([sys.executable, "-c", EMBED, str(tmp_path)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_embedding_leaves_no_onnxruntime_device_id(tmp_path: Path) -> None:
    assert _embed_in_child(tmp_path) == "1"
    assert not (tmp_path / ".cache" / "Microsoft").exists()


def test_an_explicit_choice_is_kept(tmp_path: Path) -> None:
    assert _embed_in_child(tmp_path, ORT_DISABLE_TELEMETRY="0") == "0"
