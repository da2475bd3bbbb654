"""The `tinycontext` command: --help everywhere, doctor, the server-extra hint, `rest`."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.e2e.servers import cli_env, run_cli, served_process, tinycontext_command

COMMANDS = ("mcp", "serve", "rest", "doctor", "export", "import", "repair")


def test_help_everywhere_and_version(tmp_path: Path) -> None:
    top = run_cli(tmp_path, "--help")
    assert top.returncode == 0 and all(c in top.stdout for c in COMMANDS)
    for command in COMMANDS:
        done = run_cli(tmp_path, command, "--help")
        assert done.returncode == 0 and f"usage: tinycontext {command}" in done.stdout, command
    version = run_cli(tmp_path, "--version")
    assert version.returncode == 0 and version.stdout.startswith("tinycontext ")
    assert not (tmp_path / "store").exists()


def test_top_level_help_says_where_to_start(tmp_path: Path) -> None:
    top = run_cli(tmp_path, "--help").stdout
    assert "tinycontext setup claude-code" in top and "tinycontext doctor" in top
    assert "tinycontext COMMAND --help" in top


def test_an_os_error_names_the_command_the_file_and_what_to_check(tmp_path: Path) -> None:
    target = tmp_path / "no" / "such" / "folder" / "key"
    done = run_cli(tmp_path, "keygen", "-o", str(target))
    assert done.returncode == 1 and "Errno" not in done.stderr, done.stderr
    assert done.stderr.startswith(f"tinycontext keygen: {target}: No such file or directory")
    assert "exists" in done.stderr  # what to check next


@pytest.mark.parametrize("command", ["serve", "rest"])
def test_a_busy_port_is_refused_with_what_to_do(tmp_path: Path, command: str) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        done = run_cli(tmp_path, command, "--port", port, timeout=60)
    assert done.returncode == 1, done.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr and "--port" in done.stderr
    assert "listening on" not in done.stderr and "Errno" not in done.stderr


def test_an_address_not_of_this_machine_points_at_the_host_option(tmp_path: Path) -> None:
    done = run_cli(tmp_path, "serve", "--host", "no-such-host.invalid", timeout=60)
    assert done.returncode == 1, done.stderr
    assert "cannot listen on no-such-host.invalid:8000" in done.stderr
    assert "--host" in done.stderr and "--port" not in done.stderr


@pytest.mark.parametrize("command,blocked", [("mcp", "mcp"), ("serve", "mcp"),
                                             ("serve", "uvicorn"), ("rest", "fastapi")])
def test_missing_server_extra_gives_an_install_hint(tmp_path: Path, command: str,
                                                    blocked: str) -> None:
    script = (f"import sys; sys.modules[{blocked!r}] = None\n"
              f"from tinycontext.entry.cli import main\nraise SystemExit(main([{command!r}]))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=cli_env(tmp_path), timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    # A checkout names its own folder; never the PyPI name, which is another codebase until
    # this one is released there.
    assert "pip install -e '" in done.stderr and "[server]'" in done.stderr
    assert "tinysuite-context[server]" not in done.stderr and blocked in done.stderr


@pytest.mark.slow
def test_doctor_reports_config_and_readiness_without_creating_the_store(tmp_path: Path) -> None:
    secret = "s" * 40
    done = run_cli(tmp_path, "doctor", TINYCONTEXT_RECALL_TOP_K="7",
                   TINYCONTEXT_TENANT_SECRET=secret)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert str(tmp_path / "store" / "memories.db") in out
    assert "recall_top_k" in out and " 7\n" in out
    for name in ("storage", "sqlite", "sqlite-vec", "embedding model", "token counts"):
        assert f"[  ok] {name}" in out, name
    assert "Ready." in out and secret not in out and "(set)" in out
    assert not (tmp_path / "store" / "memories.db").exists()
    report = json.loads(run_cli(tmp_path, "doctor", "--json").stdout)
    assert report["ready"] is True and {c["name"] for c in report["checks"]} >= {
        "storage", "sqlite", "sqlite-vec", "embedding model"}


@pytest.mark.slow
def test_doctor_fails_on_unwritable_storage_and_missing_model(tmp_path: Path) -> None:
    blocked = tmp_path / "blocked"
    blocked.write_text("a file, not a folder")
    done = run_cli(tmp_path, "doctor", TINYCONTEXT_MEMORY_DB_PATH=str(blocked / "m.db"),
                   TINYCONTEXT_EMBEDDING_MODEL=str(tmp_path / "no-model-here"))
    assert done.returncode == 1
    assert "[FAIL] storage" in done.stdout and "[FAIL] embedding model" in done.stdout
    assert "Not ready" in done.stdout


def test_bad_configuration_names_the_key(tmp_path: Path) -> None:
    bad_value = run_cli(tmp_path, "doctor", TINYCONTEXT_RECALL_TOP_K="lots")
    assert bad_value.returncode == 2 and "recall_top_k" in bad_value.stderr
    typo = run_cli(tmp_path, "export", TINYCONTEXT_RECAL_TOP_K="5")
    assert typo.returncode == 2 and "TINYCONTEXT_RECAL_TOP_K" in typo.stderr


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_an_unreadable_config_file_says_so_and_what_to_do(tmp_path: Path) -> None:
    config = tmp_path / "context_config.json"
    config.write_text("{}")
    command = [*tinycontext_command(), "doctor"]
    if os.geteuid() == 0:  # in a user namespace of its own, root's override does not apply
        if shutil.which("unshare") is None or subprocess.run(
                ["unshare", "--user", "true"], capture_output=True).returncode != 0:
            pytest.skip("root without user namespaces: file modes do not bind root")
        command = ["unshare", "--user", *command]
    os.chmod(config, 0)
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60,
                              env=cli_env(tmp_path, TINYCONTEXT_CONFIG_FILE=str(config)))
    finally:
        os.chmod(config, 0o600)
    assert done.returncode == 2, done.stderr
    assert f"{config} cannot be read" in done.stderr
    assert "TINYCONTEXT_CONFIG_FILE" in done.stderr and "Errno" not in done.stderr


@pytest.mark.slow
def test_rest_command_serves_the_api(tmp_path: Path) -> None:
    with served_process(tmp_path, "rest", "--with-mcp") as (base, _):
        spec = httpx.get(base + "/openapi.json").json()
        assert "/save_memories" in spec["paths"]
        saved = httpx.post(base + "/save_memories", timeout=60,  # the first save loads the model
                           json={"memories": [{"content": "rest command works"}]})
        assert saved.status_code == 200
        assert httpx.get(base + "/list_memories").json()["total_count"] == 1


@pytest.mark.parametrize("command", ["serve", "rest"])
def test_http_servers_refuse_hosted_mode_without_its_settings(tmp_path: Path, command: str) -> None:
    done = run_cli(tmp_path, command, TINYCONTEXT_TENANCY="proxy-header")
    assert done.returncode == 2 and "refused to start" in done.stderr
    for name in ("TENANT_SECRET", "TENANT_STORE_DIR", "TRUSTED_PROXY_CIDRS",
                 "TRUSTED_PROXY_TOKEN"):
        assert f"TINYCONTEXT_{name}" in done.stderr, name
    assert not (tmp_path / "store").exists()


def test_doctor_never_prints_a_store_password() -> None:
    from tinycontext.entry.doctor import _redact

    assert _redact("postgresql://bob:hunter2@db:5432/mem") == "postgresql://bob:***@db:5432/mem"
    assert _redact("postgresql://db/mem") == "postgresql://db/mem"
