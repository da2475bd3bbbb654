"""The encryption key never shows in logs, telemetry or what the CLI prints: an encrypted
store saved to, recalled, opened with another key, checked by doctor, and refused by export,
repair, rekey and decrypt, with every log record at DEBUG and every span and metric point
captured (tests/integration/encryption_key_probe.py, a fresh interpreter)."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.servers import cli_env
from tests.encryption_support import needs_extra

pytestmark = [needs_extra, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]


def _forms(material: bytes) -> set[str]:
    """Every way the key could be written out: the key file's text, the material's bytes,
    and the derived SQLCipher key as hex, as bytes and in base64."""
    from tinycontext.config.keys import store_key

    forms = set()
    for secret in (material, store_key(material)):
        forms |= {secret.hex(), secret.hex().upper(), repr(secret)[2:-1],
                  base64.b64encode(secret).decode(), secret.decode("latin-1")}
    return forms


def test_the_key_is_in_no_log_record_span_metric_or_message(tmp_path: Path) -> None:
    keys = {}
    for name in ("key", "other"):
        keys[name] = tmp_path / name
        keys[name].write_text(os.urandom(32).hex() + "\n")  # as `tinycontext keygen` does
        keys[name].chmod(0o600)
    out = tmp_path / "captured.json"
    env = cli_env(tmp_path, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-m", "tests.integration.encryption_key_probe",
                           str(tmp_path), str(out)], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    captured = json.loads(out.read_text())
    # What was captured is the real thing: spans of every operation, a refused open, doctor
    # with the key and with another one, the CLI refusing with messages, a logged traceback
    # of the refused open (as a caller's log would hold it) and metric points.
    names = {s["name"] for s in captured["spans"]}
    assert {"tinycontext.save_memories", "tinycontext.recall_memories"} <= names, names
    assert any(s["attributes"].get("error.type") == "store_locked" for s in captured["spans"])
    steps = captured["steps"]
    assert steps[0]["wrong key"] == "store_locked"
    doctors = [s for s in steps[1:] if s["args"][0] == "doctor"]
    assert [d["code"] for d in doctors] == [0, 1]
    assert "does not open it" in doctors[1]["stdout"]
    by_command = {" ".join(s["args"][:2]): s for s in steps[1:]}
    assert by_command["export -o"]["code"] == 1 and by_command["repair -o"]["code"] == 1
    assert by_command["export --encrypt"]["code"] == 0
    assert "chmod 600" in by_command["rekey --new-key-file"]["stderr"]
    assert "DEBUG probe: refused open\nTraceback" in captured["logs"] and captured["metrics"]
    text = json.dumps(captured) + out.read_text() + done.stdout + done.stderr
    for name, path in keys.items():
        material = path.read_text().strip().encode()
        leaked = [form for form in _forms(material) if form in text]
        assert leaked == [], f"the {name} key shows as {leaked}"
