"""onnxruntime's own usage telemetry stays off: since 1.29 it uploads events to Microsoft and
keeps a device id under ~/.cache/Microsoft unless ORT_DISABLE_TELEMETRY=1 is set before it
initialises. TinyContext sends nothing anywhere unless told to, and a device id written while
an image is built (its `tinycontext doctor` runs the model) would be shared by every
container started from it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.servers import cli_env, tinycontext_command

pytestmark = pytest.mark.slow


def _doctor(tmp_path: Path, **extra: str) -> Path:
    """Runs `tinycontext doctor` (which loads and runs the model) with HOME=tmp_path."""
    env = cli_env(tmp_path, HOME=str(tmp_path), **extra)
    env.pop("XDG_CACHE_HOME", None)
    if "ORT_DISABLE_TELEMETRY" not in extra:
        env.pop("ORT_DISABLE_TELEMETRY", None)
    done = subprocess.run([*tinycontext_command(), "doctor"], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "embedding model" in done.stdout
    return tmp_path / ".cache" / "Microsoft"


def test_running_the_model_leaves_no_onnxruntime_device_id(tmp_path: Path) -> None:
    assert not _doctor(tmp_path).exists()


def test_an_explicit_choice_is_kept(tmp_path: Path) -> None:
    # Whether onnxruntime then writes a device id depends on the machine (the CI machine does
    # not), so this checks the setting the runtime sees, not the runtime's behaviour.
    code = ("import os; from tinycontext import native; native.onnxruntime(); "
            "print(os.environ['ORT_DISABLE_TELEMETRY'])")
    for given, seen in ((None, "1"), ("0", "0")):
        env = cli_env(tmp_path, HOME=str(tmp_path))
        env.pop("ORT_DISABLE_TELEMETRY", None)
        if given is not None:
            env["ORT_DISABLE_TELEMETRY"] = given
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == seen
