"""compose.hosted.yaml for real (deploy/smoke.sh builds the images and sets
TINYCONTEXT_IMAGE / TINYCONTEXT_PROXY_IMAGE; skipped otherwise): nginx with basic-auth users
and TLS in front of hosted TinyContext on an internal network, both MCP and the fastapi
profile's REST. Users see only their own memories, a client's own identity headers are
ignored, and a caller that goes around the proxy is refused."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import ssl
import string
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.containers import IMAGE, PROXY_IMAGE, McpHttp, McpHttpError, engine, needs_stack
from tests.e2e.containers import wait_until_answered as wait
from tests.e2e.servers import free_port
from tests.e2e.test_container_image import record

pytestmark = [pytest.mark.slow, needs_stack]

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
USERS = ("alice", "bob")


def openssl(*args: str) -> str:
    return subprocess.run(["openssl", *args], capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    if not shutil.which("openssl") or not shutil.which("podman-compose"):
        pytest.fail("needs openssl and podman-compose (pip install 'podman-compose>=1.2')")
    # The deploy folder's compose file and template as shipped; users, TLS files and secrets
    # made here, as an operator would.
    work = tmp_path_factory.mktemp("hosted")
    shutil.copy(DEPLOY / "compose.hosted.yaml", work)
    (work / "nginx" / "certs").mkdir(parents=True)
    shutil.copy(DEPLOY / "nginx" / "tinycontext.conf.template", work / "nginx")
    certs = work / "nginx" / "certs"
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
            "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
            "-keyout", str(certs / "privkey.pem"), "-out", str(certs / "fullchain.pem"))
    (certs / "privkey.pem").chmod(0o600)
    passwords = {user: secrets.token_urlsafe(12) for user in USERS}
    # alice as `htpasswd -B` writes her (bcrypt, what the docs say), bob as SHA-512 crypt.
    salt = "".join(secrets.choice("./" + string.ascii_letters + string.digits) for _ in range(22))
    bcrypt = engine("run", "--rm", "--entrypoint", "perl", PROXY_IMAGE, "-e",
                    "print crypt($ARGV[0], $ARGV[1])", passwords["alice"], f"$2y$05${salt}")
    assert bcrypt.stdout.startswith("$2y$05$") and len(bcrypt.stdout) == 60, bcrypt.stdout
    (work / "nginx" / "htpasswd").write_text(
        f"alice:{bcrypt.stdout}\nbob:{openssl('passwd', '-6', passwords['bob']).strip()}\n")
    (work / "nginx" / "htpasswd").chmod(0o600)  # root's own: the proxy copies it for nginx

    port = free_port()
    env = {**os.environ, "TINYCONTEXT_HTTPS_PORT": str(port),
           "TINYCONTEXT_TENANT_SECRET": secrets.token_urlsafe(48),
           "TINYCONTEXT_TRUSTED_PROXY_TOKEN": secrets.token_urlsafe(48)}
    project = f"tchosted{os.getpid()}"

    def compose(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["podman-compose", "-p", project, "-f",
                               str(work / "compose.hosted.yaml"), "--profile", "fastapi", *args],
                              env=env, capture_output=True, text=True, timeout=300)

    began = time.monotonic()
    up = compose("up", "-d")
    base = f"https://127.0.0.1:{port}"
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        verify = ssl.create_default_context(cafile=str(certs / "fullchain.pem"))
        wait(base + "/health", verify=verify)
        record("hosted_up_to_health_s", time.monotonic() - began)
        yield {"base": base, "verify": verify, "passwords": passwords,
               "project": project, "token": env["TINYCONTEXT_TRUSTED_PROXY_TOKEN"]}
    finally:
        logs = compose("logs")
        down = compose("down", "-v")
        print(logs.stdout[-4000:], logs.stderr[-2000:], down.stderr[-2000:])


def http(stack: dict[str, Any], user: str | None, **headers: str) -> httpx.Client:
    auth = (user, stack["passwords"][user]) if user else None
    return httpx.Client(base_url=stack["base"] + "/api", auth=auth, verify=stack["verify"],
                        headers=headers, timeout=60)


def mcp(stack: dict[str, Any], user: str, **headers: str) -> McpHttp:
    return McpHttp(stack["base"] + "/mcp", verify=stack["verify"],
                   auth=(user, stack["passwords"][user]), headers=headers)


def contents(listing: dict[str, Any]) -> set[str]:
    return {m["content"] for m in listing["memories"]}


def test_each_user_sees_only_their_own_memories(stack: dict[str, Any]) -> None:
    with mcp(stack, "alice") as alice:
        alice.tool("save_memories", {"memories": [{"content": "Alice's cat is called Miso."}]})
    with http(stack, "bob") as bob:
        saved = bob.post("/save_memories", json={"memories": [
            {"content": "Bob's sailing boat is named Petrel."}]})
        assert saved.status_code == 200, saved.text
        assert contents(bob.get("/list_memories").json()) == {
            "Bob's sailing boat is named Petrel."}
        recall = bob.get("/recall_memories", params={"query": "What is the cat called?"}).json()
        assert "Miso" not in json.dumps(recall)
    with mcp(stack, "alice") as alice:
        assert "Miso" in alice.tool("recall_memories", {"query": "What is the cat called?"})
        listing = alice.tool("list_memories", {})
        assert "Miso" in listing and "Petrel" not in listing
    # One store file per user, named by neither, owner-only.
    name = f"{stack['project']}_tinycontext_1"
    files = engine("exec", name, "find", "/data/tenants", "-name", "*.db",
                   "-printf", "%m %f\\n").stdout.split("\n")
    stores = [line.split() for line in files if line.strip()]
    assert len(stores) == 2 and all(mode == "600" for mode, _ in stores)
    assert not [f for _, f in stores if any(u in f for u in USERS)]


def test_identity_headers_from_the_client_are_ignored(stack: dict[str, Any]) -> None:
    spoof = {"X-TinyContext-User-Id": "bob", "X-TinyContext-Proxy-Token": stack["token"]}
    with http(stack, "alice", **spoof) as alice:
        saved = alice.post("/save_memories", json={"memories": [
            {"content": "Alice keeps the spare key under the blue pot."}]})
        assert saved.status_code == 200, saved.text
        mine = contents(alice.get("/list_memories").json())
        assert "Alice keeps the spare key under the blue pot." in mine
        assert not [c for c in mine if "Petrel" in c]
    with mcp(stack, "alice", **spoof) as alice:
        assert "Petrel" not in alice.tool("list_memories", {})
    with http(stack, "bob") as bob:
        assert not [c for c in contents(bob.get("/list_memories").json()) if "spare key" in c]


def test_the_proxy_refuses_unauthenticated_callers(stack: dict[str, Any]) -> None:
    with http(stack, None) as anonymous:
        assert anonymous.get("/list_memories").status_code == 401
    wrong = httpx.get(stack["base"] + "/api/list_memories", auth=("alice", "not-her-password"),
                      verify=stack["verify"])
    assert wrong.status_code == 401
    with pytest.raises(McpHttpError) as refused:
        McpHttp(stack["base"] + "/mcp", verify=stack["verify"])
    assert refused.value.status == 401
    assert httpx.get(stack["base"] + "/health", verify=stack["verify"]).status_code == 200


BYPASS = """
import json, os, urllib.request, urllib.error
def status(url, body=None):
    headers = {"X-TinyContext-Proxy-Token": os.environ["TOKEN"],
               "X-TinyContext-User-Id": "alice", "content-type": "application/json",
               "accept": "application/json, text/event-stream"}
    request = urllib.request.Request(url, data=body, headers=headers)
    try:
        return urllib.request.urlopen(request, timeout=20).status
    except urllib.error.HTTPError as exc:
        return exc.code
init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "bypass", "version": "0"}}}).encode()
print(json.dumps({"mcp": status("http://tinycontext:8000/mcp", init),
                  "rest": status("http://tinycontext-rest:8001/list_memories")}))
"""


def test_a_caller_going_around_the_proxy_is_refused(stack: dict[str, Any]) -> None:
    """Another container on the internal network, with the right token and a user id, but
    not at the proxy's address: both services answer 401."""
    done = engine("run", "--rm", "--network", f"{stack['project']}_private",
                  "-e", f"TOKEN={stack['token']}", "--entrypoint", "python", IMAGE,
                  "-c", BYPASS, timeout=120)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"mcp": 401, "rest": 401}


@pytest.mark.parametrize(("resolv_conf", "resolver"), [
    ("nameserver 127.0.0.11\noptions ndots:0\n", "127.0.0.11"),  # Docker's embedded DNS
    ("search dns.podman\nnameserver 10.89.0.1\nnameserver 10.255.255.53\n", "10.89.0.1"),
    ("nameserver fe80::1%eth0\nnameserver fd00::53\n", "[fd00::53]"),
])
def test_proxy_takes_its_resolver_from_resolv_conf(tmp_path: Path, resolv_conf: str,
                                                   resolver: str) -> None:
    """The proxy image's start-up with the resolv.conf each engine writes: nginx gets the
    engine's DNS (only the first server: podman lists the host's after it), and the workers
    can read the copied user file. A stand-in `nginx` shows what the real one would load."""
    (tmp_path / "resolv.conf").write_text(resolv_conf)
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "nginx").write_text(
        "#!/bin/sh\ngrep -h '^ *resolver' /tmp/nginx/conf.d/*.conf\n"
        "stat -c '%a %U %G' /tmp/nginx/htpasswd\n")
    (tmp_path / "bin" / "nginx").chmod(0o755)
    (tmp_path / "htpasswd").write_text("alice:x\n")
    (tmp_path / "htpasswd").chmod(0o600)
    (tmp_path / "certs").mkdir()
    for name in ("fullchain.pem", "privkey.pem"):
        (tmp_path / "certs" / name).write_text("placeholder\n")
    template = DEPLOY / "nginx" / "tinycontext.conf.template"
    done = engine("run", "--rm", "-e", "PATH=/stand-in:/usr/sbin:/usr/bin:/sbin:/bin",
                  "-e", "TINYCONTEXT_TRUSTED_PROXY_TOKEN=t",
                  "-v", f"{tmp_path / 'resolv.conf'}:/etc/resolv.conf:ro",
                  "-v", f"{tmp_path / 'bin'}:/stand-in:ro",
                  "-v", f"{template}:/etc/nginx/templates/default.conf.template:ro",
                  "-v", f"{tmp_path / 'htpasswd'}:/etc/nginx/htpasswd:ro",
                  "-v", f"{tmp_path / 'certs'}:/etc/nginx/certs:ro", PROXY_IMAGE)
    lines = done.stdout.strip().splitlines()
    assert lines[0].split() == ["resolver", resolver, "valid=30s", "ipv6=off;"]
    assert lines[1] == "640 root www-data"
