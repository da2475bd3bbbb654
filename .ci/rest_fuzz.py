"""A bounded schemathesis run against the REST app, as CI runs it (a few minutes at most).

Starts `tinycontext rest` on a free loopback port over a temporary store (no developer
configuration is read), runs every schemathesis phase with every check against its OpenAPI
document, and exits with schemathesis' status: any finding (a 5xx, a response that breaks the
schema, a request the schema allows but the engine refuses or the other way round, a 405
without `Allow`, ...) fails CI. The seed is fixed so a run is reproducible; set
REST_FUZZ_SEED (and REST_FUZZ_EXAMPLES) to explore further.

    python .ci/rest_fuzz.py [extra schemathesis options]
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

SEED = os.environ.get("REST_FUZZ_SEED", "20260731")
EXAMPLES = os.environ.get("REST_FUZZ_EXAMPLES", "40")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _command(name: str) -> list[str]:
    script = Path(sys.executable).parent / name
    if script.exists():
        return [str(script)]
    found = shutil.which(name)
    if found is None:
        raise SystemExit(f"rest_fuzz: {name} is not installed (pip install -e '.[server,test]')")
    return [found]


def _wait(url: str, process: subprocess.Popen[bytes], timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"rest_fuzz: the REST server exited with {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=1.0) as response:  # noqa: S310 (loopback)
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"rest_fuzz: {url} did not answer within {timeout:.0f} s")


def main(extra: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="tinycontext-fuzz-") as work:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TINYCONTEXT_", "OTEL_"))}
        env.update(
            TINYCONTEXT_CONFIG_FILE=str(Path(work) / "no-such-config.json"),
            TINYCONTEXT_MEMORY_DB_PATH=str(Path(work) / "store" / "memories.db"),
            TINYCONTEXT_MODELS_DIR=str(Path(work) / "models"),
        )
        port = _free_port()
        base = f"http://127.0.0.1:{port}"
        with open(Path(work) / "server.log", "wb") as log:
            server = subprocess.Popen(
                [*_command("tinycontext"), "rest", "--host", "127.0.0.1", "--port", str(port)],
                env=env, stdout=log, stderr=subprocess.STDOUT,
            )
            try:
                _wait(base + "/health", server)
                run = subprocess.run([
                    *_command("st"), "run", base + "/openapi.json", "--checks", "all",
                    "--max-examples", EXAMPLES, "--seed", SEED, "--workers", "1",
                    "--request-timeout", "30", "--no-color", *extra,
                ], env={**env, "SCHEMATHESIS_HOOKS": "rest_fuzz_hooks",
                        "PYTHONPATH": str(Path(__file__).resolve().parent)},
                    cwd=work, check=False)  # schemathesis keeps its replay files in the cwd
            finally:
                server.terminate()
                try:
                    server.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    server.kill()
        if run.returncode != 0:
            tail = (Path(work) / "server.log").read_text(errors="replace")[-4000:]
            print(f"rest_fuzz: schemathesis found problems; server log tail:\n{tail}",
                  file=sys.stderr)
        return run.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
