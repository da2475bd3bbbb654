"""The encryption key never shows in logs, telemetry or what the CLI prints: an encrypted
store saved to, recalled, opened with another key, checked by doctor, and refused by export,
repair, rekey and decrypt, with every log record at DEBUG and every span and metric point
captured (tests/integration/encryption_key_probe.py, a fresh interpreter). In hosted mode
neither the server's key, nor the key derived for each user, nor the tenant secret, the proxy
and management tokens or a user id shows in logs, telemetry, responses, tool errors, an
export or the CLI (tests/integration/hosted_key_probe.py)."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.e2e.servers import cli_env
from tests.encryption_support import needs_extra

pytestmark = [needs_extra, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]


def _forms(secret: bytes) -> set[str]:
    """Every way a key could be written out: as text, as hex, as bytes and in base64."""
    return {secret.hex(), secret.hex().upper(), repr(secret)[2:-1],
            base64.b64encode(secret).decode(), secret.decode("latin-1")}


def _key_forms(material: bytes) -> set[str]:
    """The key file's material and the single-user store key derived from it."""
    from tinycontext.config.keys import store_key

    return _forms(material) | _forms(store_key(material))


def _probe(module: str, tmp_path: Path) -> tuple[dict[str, Any], str, dict[str, bytes]]:
    """Run the probe in a fresh interpreter over two new key files (`key`, `other`): what it
    captured, all of its output as one text, and each key file's material."""
    keys = {}
    for name in ("key", "other"):
        path = tmp_path / name
        path.write_text(os.urandom(32).hex() + "\n")  # as `tinycontext keygen` does
        path.chmod(0o600)
        keys[name] = path.read_text().strip().encode()
    out = tmp_path / "captured.json"
    env = cli_env(tmp_path, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-m", module, str(tmp_path), str(out)], env=env,
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    text = out.read_text() + done.stdout + done.stderr
    return json.loads(out.read_text()), text, keys


def test_the_key_is_in_no_log_record_span_metric_or_message(tmp_path: Path) -> None:
    captured, text, keys = _probe("tests.integration.encryption_key_probe", tmp_path)
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
    for name, material in keys.items():
        leaked = [form for form in _key_forms(material) if form in text]
        assert leaked == [], f"the {name} key shows as {leaked}"


def test_hosted_keys_secrets_and_user_ids_are_in_no_log_span_response_or_export(
    tmp_path: Path,
) -> None:
    from tests.integration.hosted_key_probe import ALICE, CAROL, OPERATOR_TOKEN
    from tests.integration.hosted_support import SECRET, TOKEN
    from tinycontext.adapters.hosting.tenant_stores import tenant_key
    from tinycontext.config.keys import tenant_store_key

    captured, text, keys = _probe("tests.integration.hosted_key_probe", tmp_path)
    # The real thing: every operation and the export served from encrypted per-user files, the
    # gate's refusals logged, Carol's plain file refused until `encrypt --hosted-folder`
    # converted it, and the server started with another key refusing Alice's file.
    names = {s["name"] for s in captured["spans"]}
    assert {"tinycontext.save_memories", "tinycontext.recall_memories",
            "tinycontext.update_memory", "tinycontext.store.export_page"} <= names, names
    assert any(s["attributes"].get("error.type") == "store_locked" for s in captured["spans"])
    steps = {s.get("step") or " ".join(s["args"][:2]): s for s in captured["steps"]}
    for name in ("save", "recall", "list", "get", "update", "delete", "carol after encrypt"):
        assert steps[name]["status"] == 200, steps[name]
    assert steps["export"]["body"].count("\n") >= 2 and "roses" in steps["export"]["body"]
    assert "roses" in steps["view memories"]["body"]
    assert '"store_count": 2' in steps["view service"]["body"], steps["view service"]
    assert [steps[n]["status"] for n in ("wrong token", "no token", "untrusted peer")] == [401] * 3
    for name, why in (("carol before encrypt", "not encrypted"),
                      ("alice other key", "does not open it")):
        assert steps[name]["status"] == 503 and why in steps[name]["body"], steps[name]
    mcp = [s for s in captured["steps"] if s.get("step", "").startswith("mcp ")]
    assert [s["error"] for s in mcp] == [False, False, True, True, True, True]
    assert all(s["body"].startswith("store_locked:") for s in mcp if s["error"])
    encrypts = [s for s in captured["steps"] if s.get("args", [""])[0] == "encrypt"]
    assert "1 of 2 users' stores" in encrypts[0]["stderr"]
    assert "refused GET /list_memories from 127.0.0.2" in captured["logs"]
    assert "DEBUG probe: refused open\nTraceback" in captured["logs"] and captured["metrics"]
    assert len(captured["files"]) == 2
    for name, material in keys.items():
        secrets = _key_forms(material)
        for user in (ALICE, CAROL):  # the key derived for each user's file
            secrets |= _forms(tenant_store_key(material, tenant_key(SECRET.encode(), user)))
        leaked = [form for form in secrets if form in text]
        assert leaked == [], f"the {name} key or a user's key from it shows as {leaked}"
    for what, value in (("tenant secret", SECRET), ("proxy token", TOKEN),
                        ("management token", OPERATOR_TOKEN), ("a user id", ALICE),
                        ("a user id", CAROL)):
        shown = [form for form in (value, quote(value, safe="")) if form in text]
        assert shown == [], f"{what} shows as {shown}"
