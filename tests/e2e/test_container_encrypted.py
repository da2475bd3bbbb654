"""The built image (with the `encryption` extra, as deploy/smoke.sh builds it) on a volume,
its key handed in as a secret file: memories saved and recalled, and the store file on the
volume is no plain SQLite and holds none of what was saved."""

from __future__ import annotations

import json
import os
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.containers import ENGINE, IMAGE, McpHttp, engine, needs_image, wait_until_answered
from tests.e2e.servers import free_port
from tests.e2e.test_container_image import QUICKSTART, run_args

pytestmark = [pytest.mark.slow, needs_image,
              pytest.mark.skipif(ENGINE != "podman", reason="uses podman's secrets and volumes")]

PLANTED = f"planted-marker-{secrets.token_hex(8)} the vault code is 4471"
KEY_PATH = "/run/secrets/tinycontext_key"


@pytest.fixture
def encrypted(tmp_path: Path) -> Iterator[dict[str, Any]]:
    tag = f"tc-enc-{os.getpid()}"
    names = {"name": tag, "volume": f"{tag}-data", "secret": f"{tag}-key"}
    key = tmp_path / "store.key"
    key.write_text(secrets.token_hex(32))  # as `tinycontext keygen` writes one
    key.chmod(0o600)
    engine("secret", "create", names["secret"], str(key))
    yield names
    engine("rm", "-f", "-t", "0", names["name"], check=False)
    engine("volume", "rm", "-f", names["volume"], check=False)
    engine("secret", "rm", names["secret"], check=False)


def test_encrypted_volume_keeps_memories_and_no_plain_text(encrypted: dict[str, Any]) -> None:
    port = free_port()
    # The quickstart's service (read-only root, no capabilities), plus the key as a secret.
    args = run_args(QUICKSTART["services"]["tinycontext"], encrypted["name"],
                    encrypted["volume"], port)
    # The read-only root has no /run/secrets to mount the secret on: a tmpfs gives it one.
    args[args.index(IMAGE):args.index(IMAGE)] = [
        "--tmpfs", "/run/secrets",
        "--secret", f"{encrypted['secret']},target=tinycontext_key,uid=10001,mode=0400",
        "-e", f"TINYCONTEXT_ENCRYPTION_KEY_FILE={KEY_PATH}"]
    engine(*args)
    began = time.monotonic()
    wait_until_answered(f"http://127.0.0.1:{port}/health", timeout=120)
    with McpHttp(f"http://127.0.0.1:{port}/mcp") as client:
        saved = json.loads(client.tool("save_memories", {"memories": [
            {"content": PLANTED, "tags": ["planted-tag"]}]}))["saved"]
        recalled = client.tool("recall_memories", {"query": "What is the vault code?"})
    assert PLANTED in recalled and saved[0]["ref"] in recalled
    doctor = engine("exec", encrypted["name"], "tinycontext", "doctor", check=False).stdout
    assert "store is encrypted" in doctor, doctor
    assert KEY_PATH not in engine("logs", encrypted["name"]).stdout
    print(f"encrypted container: run to first recall {time.monotonic() - began:.1f} s")

    # Stopped (SIGTERM: the server closes the store), the volume's files are read directly.
    engine("stop", "-t", "30", encrypted["name"], timeout=60)
    mount = engine("volume", "inspect", "--format", "{{.Mountpoint}}",
                   encrypted["volume"]).stdout.strip()
    folder = Path(mount)
    store = folder / "memories.db"
    assert store.stat().st_size > 0
    assert not store.read_bytes().startswith(b"SQLite format 3\x00")
    for path in folder.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for planted in (b"planted-marker", b"vault code", b"planted-tag"):
                assert planted not in data, f"{planted!r} found in {path.name}"

    # Started again with the key, it still answers from the encrypted store.
    engine("start", encrypted["name"], timeout=60)
    wait_until_answered(f"http://127.0.0.1:{port}/health", timeout=120)
    with McpHttp(f"http://127.0.0.1:{port}/mcp") as client:
        assert PLANTED in client.tool("recall_memories", {"query": "vault code"})
