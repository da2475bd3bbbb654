"""The built image, run the way compose.quickstart.yaml runs it (deploy/smoke.sh builds it and
sets TINYCONTEXT_IMAGE; skipped otherwise): what the image holds, MCP and REST answers,
healthcheck, user and file modes, memories surviving restarts, and a clean SIGTERM stop."""

from __future__ import annotations

import json
import os
import re
import tarfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.containers import ENGINE, IMAGE, McpHttp, engine, needs_image, wait_until_answered
from tests.e2e.servers import free_port

yaml = pytest.importorskip("yaml")

pytestmark = [pytest.mark.slow, needs_image]

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = yaml.safe_load((ROOT / "deploy" / "compose.quickstart.yaml").read_text())
# What the build may leave in /data (= HOME): the empty store folders and the model's
# integer rewrite, which is derived from the installed model file alone.
ALLOWED_DATA = re.compile(r"data|data/(models|tenants)|data/\.cache|data/\.cache/tinycontext"
                          r"|data/\.cache/tinycontext/prepared-models"
                          r"|data/\.cache/tinycontext/prepared-models/model-[\w-]+\.onnx")


def record(name: str, seconds: float) -> None:
    """Adds a measured time to the smoke test's report (TINYCONTEXT_SMOKE_REPORT)."""
    path = os.environ.get("TINYCONTEXT_SMOKE_REPORT")
    if not path:
        return
    report = json.loads(Path(path).read_text()) if Path(path).exists() else {}
    report[name] = round(seconds, 2)
    Path(path).write_text(json.dumps(report, indent=1))


def run_args(service: dict[str, Any], name: str, volume: str, port: int) -> list[str]:
    """`run` options equal to the compose service's (its published port moved to `port`)."""
    handled = {"image", "build", "volumes", "read_only", "tmpfs", "cap_drop", "security_opt",
               "restart", "command", "ports", "profiles"}
    assert set(service) <= handled, f"compose options this test does not apply: {set(service)}"
    inner = service["ports"][0].rsplit(":", 1)[1]
    args = ["run", "-d", "--name", name, "-v", f"{volume}:/data", "-p", f"127.0.0.1:{port}:{inner}"]
    if service.get("read_only"):
        args.append("--read-only")
    for path in service.get("tmpfs", []):
        args += ["--tmpfs", path]
    for cap in service.get("cap_drop", []):
        args += ["--cap-drop", cap]
    for option in service.get("security_opt", []):
        args += ["--security-opt", option]
    return [*args, IMAGE, *service["command"]]


def image_info() -> dict[str, Any]:
    return json.loads(engine("image", "inspect", IMAGE).stdout)[0]  # type: ignore[no-any-return]


def test_image_settings_and_history_carry_no_build_secret() -> None:
    info = image_info()
    config = info["Config"]
    assert config["User"] == "10001:10001"
    # Podman keeps HEALTHCHECK only in the docker format (`build --format docker`).
    health = info.get("Healthcheck") or config.get("Healthcheck")
    assert health and health["Test"] == ["CMD", "tinycontext", "doctor"]
    env = dict(item.split("=", 1) for item in config["Env"])
    assert env["ORT_DISABLE_TELEMETRY"] == "1" and env["HOME"] == "/data"
    assert not [k for k in env if k.startswith(("PIP_", "REQUESTS_", "SSL_CERT"))]
    history = engine("history", "--no-trunc", "--format", "{{.CreatedBy}}", IMAGE).stdout
    assert "pip install" not in history  # the install step lives in the build stage only
    assert "PIP_" not in history and "pip.conf" not in history and "pip-cert" not in history


def test_image_files_hold_nothing_of_the_build_machine(tmp_path: Path) -> None:
    """Every file of the image (as `export` streams it, without a run's mounts): no pip
    settings or CA bundle from the build secrets, no host name or resolver, and in /data
    (HOME) nothing but the empty store folders and the model cache."""
    name = f"tc-files-{os.getpid()}"
    engine("create", "--name", name, IMAGE)
    try:
        tar_path = tmp_path / "image.tar"
        engine("export", "-o", str(tar_path), name, timeout=300)
    finally:
        engine("rm", "-f", "-v", name, check=False)
    with tarfile.open(tar_path) as tar:
        members = {m.name.removeprefix("./").rstrip("/"): m for m in tar.getmembers()}
    assert "opt/tinycontext/bin/tinycontext" in members
    leaked = [n for n in members if re.search(r"(^|/)(pip\.conf|pip-cert)$", n)
              or n.startswith("run/secrets/")]
    assert not leaked, leaked
    for host_file in ("etc/hostname", "etc/resolv.conf", "etc/hosts", "etc/machine-id"):
        member = members.get(host_file)
        assert member is None or member.size == 0 or host_file == "etc/hosts", host_file
    data = sorted(n for n in members if n == "data" or n.startswith("data/"))
    assert [n for n in data if not ALLOWED_DATA.fullmatch(n)] == []
    assert any(n.endswith(".onnx") for n in data)  # the model was warmed at build
    modes = {n: members[n].mode & 0o777 for n in ("data", "data/tenants")}
    assert modes == {"data": 0o700, "data/tenants": 0o700}
    assert members["data"].uid == 10001


@pytest.fixture(scope="module")
def quickstart() -> Iterator[dict[str, Any]]:
    tag = f"tc-quick-{os.getpid()}"
    names = {"mcp": f"{tag}-mcp", "rest": f"{tag}-rest", "volume": f"{tag}-data"}
    yield {"tag": tag, **names}
    for key in ("mcp", "rest"):
        engine("rm", "-f", "-t", "0", names[key], check=False)
    engine("volume", "rm", "-f", names["volume"], check=False)


def start_mcp(quickstart: dict[str, Any], port: int) -> float:
    """Starts the quickstart's MCP service; seconds from `run` until /health answers."""
    service = QUICKSTART["services"]["tinycontext"]
    began = time.monotonic()
    engine(*run_args(service, quickstart["mcp"], quickstart["volume"], port))
    wait_until_answered(f"http://127.0.0.1:{port}/health")
    return time.monotonic() - began


def test_quickstart_container_serves_and_keeps_memories(quickstart: dict[str, Any]) -> None:
    port = free_port()
    mcp_url = f"http://127.0.0.1:{port}/mcp"
    record("run_to_health_s", start_mcp(quickstart, port))
    began = time.monotonic()
    with McpHttp(mcp_url) as client:
        assert client.server_info["name"] == "tinycontext"
        saved = json.loads(client.tool("save_memories", {"memories": [
            {"content": "The release train leaves every second Wednesday."}]}))["saved"]
        recalled = client.tool("recall_memories", {"query": "When does the release train go?"})
    record("first_save_and_recall_s", time.monotonic() - began)
    assert "second Wednesday" in recalled and saved[0]["ref"] in recalled

    # Runs as the image's user, the store owner-only.
    name = quickstart["mcp"]
    assert engine("exec", name, "id", "-u").stdout.strip() == "10001"
    listing = engine("exec", name, "find", "/data", "-maxdepth", "1",
                     "-printf", "%m %u %f\\n").stdout.split("\n")
    modes = {line.split()[2]: line.split()[:2] for line in listing if line.strip()}
    assert modes["data"] == ["700", "tinycontext"]
    assert modes["memories.db"] == ["600", "tinycontext"]
    assert modes["tenants"] == ["700", "tinycontext"]
    for extra in ("memories.db-wal", "memories.db-shm"):
        assert modes.get(extra, ["600"])[0] == "600"

    # The healthcheck the image declares passes in the running container.
    if ENGINE == "podman":
        engine("healthcheck", "run", name, timeout=120)
        status = engine("inspect", "--format", "{{.State.Health.Status}}", name).stdout
        assert status.strip() == "healthy"
    else:
        engine("exec", name, "tinycontext", "doctor", timeout=120)

    # The fastapi profile's REST service on the same volume sees the same store.
    rest_port = free_port()
    rest = QUICKSTART["services"]["tinycontext-rest"]
    engine(*run_args(rest, quickstart["rest"], quickstart["volume"], rest_port))
    rest_base = f"http://127.0.0.1:{rest_port}"
    wait_until_answered(rest_base + "/health")
    assert httpx.get(rest_base + "/health").json()["status"] == "ok"
    listed = httpx.get(rest_base + "/list_memories", timeout=30).json()
    assert [m["ref"] for m in listed["memories"]] == [saved[0]["ref"]]
    engine("rm", "-f", "-t", "0", quickstart["rest"])

    # Restarted, the container answers with its memories.
    engine("restart", name, timeout=60)
    wait_until_answered(f"http://127.0.0.1:{port}/health")
    with McpHttp(mcp_url) as client:
        assert "second Wednesday" in client.tool("recall_memories", {"query": "release train"})


def test_sigterm_loses_no_acknowledged_write_and_exits_in_time(
        quickstart: dict[str, Any]) -> None:
    name = quickstart["mcp"]
    if engine("container", "exists", name, check=False).returncode != 0:
        pytest.skip("needs the container of the test before")
    port = int(engine("port", name, "8000").stdout.strip().rsplit(":", 1)[1])
    url = f"http://127.0.0.1:{port}/mcp"
    acknowledged: list[int] = []
    stop = threading.Event()

    def writer() -> None:
        with McpHttp(url) as client:
            number = 0
            while not stop.is_set():
                number += 1
                try:
                    client.tool("save_memories", {"memories": [
                        {"content": f"Shutdown probe write {number} for batch {number * 7919}."}]})
                except (httpx.HTTPError, Exception):
                    return
                acknowledged.append(number)

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while len(acknowledged) < 5 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(acknowledged) >= 5, "saves did not get through before the stop"
    began = time.monotonic()
    engine("stop", "-t", "10", name, timeout=60)  # SIGTERM, SIGKILL after 10 s
    took = time.monotonic() - began
    stop.set()
    thread.join(timeout=30)
    record("sigterm_to_exit_s", took)
    state = json.loads(engine("inspect", "--format", "{{json .State}}", name).stdout)
    assert took < 10 and state["ExitCode"] == 0, (took, state)

    # A new container on the same volume: every acknowledged write is there.
    engine("rm", name)
    began = time.monotonic()
    start_mcp(quickstart, port)
    with McpHttp(url) as client:
        listing = client.tool("list_memories", {"search": "Shutdown probe", "limit": 200})
        record("run_to_first_answer_warm_volume_s", time.monotonic() - began)
        found = {int(n) for n in re.findall(r"Shutdown probe write (\d+) ", listing)}
        assert set(acknowledged) <= found, sorted(set(acknowledged) - found)
        assert "second Wednesday" in client.tool("recall_memories", {"query": "release train"})
