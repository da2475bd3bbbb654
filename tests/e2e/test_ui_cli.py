"""`--ui` on `tinycontext rest` and `tinycontext serve`: the same pages at /ui of the running
server, signed in with the printed link; the server's own routes keep working."""

from __future__ import annotations

import httpx
import pytest

from tests.e2e.servers import run_cli, served_process


@pytest.mark.slow
@pytest.mark.parametrize("command", ["rest", "serve"])
def test_ui_flag_mounts_the_pages(tmp_path, command):
    with served_process(tmp_path, command, "--ui") as (base, process):
        line = process.stdout.readline()  # type: ignore[union-attr]
        assert "memory browser: " in line, line
        link = line.split(": ", 1)[1].strip()
        assert link.startswith(base + "/ui/?token=")
        with httpx.Client(follow_redirects=False) as client:
            assert client.get(base + "/ui/").status_code == 401
            first = client.get(link)
            assert first.status_code == 303 and first.headers["location"] == "/ui/"
            page = client.get(base + "/ui/memories")
            assert page.status_code == 200 and "No memories match" in page.text
            assert 'href="/ui/static/ui.css"' in page.text
            assert client.get(base + "/ui/static/ui.js").status_code == 200
            assert client.get(base + "/health").status_code == 200


def test_ui_help_is_complete(tmp_path):
    result = run_cli(tmp_path, "ui", "--help")
    assert result.returncode == 0
    for option in ("--host", "--port", "--no-open", "token"):
        assert option in result.stdout
    for command in ("rest", "serve"):
        assert "--ui" in run_cli(tmp_path, command, "--help").stdout


def test_ui_refuses_hosted_mode_with_what_to_do():
    from types import SimpleNamespace

    from tinycontext.entry.ui_command import HOSTED_REFUSAL, run_ui

    with pytest.raises(SystemExit) as refused:
        run_ui(SimpleNamespace(hosted=True), "127.0.0.1", None, False)
    assert str(refused.value) == HOSTED_REFUSAL and "--ui to `tinycontext rest`" in HOSTED_REFUSAL


def test_ui_port_in_use_is_a_clear_error(tmp_path):
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        result = run_cli(tmp_path, "ui", "--no-open", "--port", str(port), timeout=60)
    assert result.returncode != 0
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr and "--port" in result.stderr
