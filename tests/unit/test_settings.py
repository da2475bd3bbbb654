"""tinycontext.config.settings (pydantic-settings) and the bootstrap's start-up reads."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from pydantic_settings import BaseSettings

from tinycontext.config import settings
from tinycontext.config.engine import ConfigError, TinyContextConfig
from tinycontext.entry import bootstrap


def test_the_layers_are_pydantic_settings_sources(tmp_path: Path) -> None:
    assert issubclass(settings.EngineSettings, BaseSettings)
    assert issubclass(settings.ServerVariables, BaseSettings)
    file = tmp_path / "c.json"
    file.write_text(json.dumps({"recall_top_k": 4, "profile_max_tokens": 9}))
    config = settings.load_config({"TINYCONTEXT_PROFILE_MAX_TOKENS": "11"}, file)
    assert type(config) is TinyContextConfig  # equal to, and hashed like, one built in code
    assert (config.recall_top_k, config.profile_max_tokens) == (4, 11)


def test_every_server_name_is_known_and_others_are_not(tmp_path: Path) -> None:
    none = tmp_path / "none.json"
    for field in settings.ServerVariables.model_fields:
        settings.load_config({f"TINYCONTEXT_{field.upper()}": "x"} | (
            {} if field != "store_url" else {"TINYCONTEXT_STORE_URL": ""}), none)
    with pytest.raises(ConfigError, match="unknown environment variable TINYCONTEXT_TENANT"):
        settings.load_config({"TINYCONTEXT_TENANT": "proxy-header"}, none)


def test_server_variables_as_written() -> None:
    read = settings.server_variables({"TINYCONTEXT_TENANCY": "proxy-header",
                                      "TINYCONTEXT_user_header": "X-Other", "HOST": "h"})
    assert read.tenancy == "proxy-header"
    assert read.user_header == "" and read.host == ""  # names are upper-case, prefixed
    assert read.port is None and settings.server_variables({"TINYCONTEXT_PORT": ""}).port == ""


def test_loads_on_several_threads_see_only_their_own_environment(tmp_path: Path) -> None:
    got: dict[int, int] = {}

    def load(n: int) -> None:
        for _ in range(20):
            env = {"TINYCONTEXT_RECALL_TOP_K": str(n)}
            got[n] = settings.load_config(env, tmp_path / "none.json").recall_top_k
            assert got[n] == n

    threads = [threading.Thread(target=load, args=(n,)) for n in range(1, 5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == {1: 1, 2: 2, 3: 3, 4: 4}


def test_a_service_built_in_code_reads_no_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TINYCONTEXT_RECALL_TOP_K", "3")
    monkeypatch.setenv("TINYCONTEXT_TYPO", "1")  # would stop a server process
    from tinycontext.entry.container import build_service
    from tinycontext.testing import HashEmbedder

    service = build_service(
        TinyContextConfig(memory_db_path=str(tmp_path / "m.db")), embedder=HashEmbedder(),
        background=False)
    try:
        assert service.config.recall_top_k == 10
    finally:
        service.close()


def test_read_settings_reads_the_given_environment(tmp_path: Path) -> None:
    env = {"TINYCONTEXT_CONFIG_FILE": str(tmp_path / "none.json"), "TINYCONTEXT_HOST": "::1",
           "TINYCONTEXT_RECALL_TOP_K": "6", "OTEL_SERVICE_NAME": "x"}
    read = bootstrap.read_settings(env)
    assert read.config.recall_top_k == 6 and read.variables.host == "::1"
    assert read.environ["OTEL_SERVICE_NAME"] == "x"


def test_open_server_checks_the_variables_read_at_start_up(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # One parse: the server settings come from the variables read_settings read, and the
    # environment is not parsed a second time (which could see other values).
    from tinycontext.adapters.system import heap
    from tinycontext.hosted import serving as hosted

    token = "Zq8-management-token-k3Vx9wT2pLm7"
    read = bootstrap.read_settings({"TINYCONTEXT_CONFIG_FILE": str(tmp_path / "none.json"),
                                    "TINYCONTEXT_MANAGEMENT": "on",
                                    "TINYCONTEXT_MANAGEMENT_TOKEN": token})

    def parse_again(environ: object = None) -> None:
        raise AssertionError("the server variables were parsed a second time")

    seen = []
    monkeypatch.setattr(settings, "server_variables", parse_again)
    monkeypatch.setattr(hosted, "open_serving", lambda config, server, parts: seen.append(server)
                        or hosted.Serving(None))
    monkeypatch.setattr(heap, "start_heap_trimmer", lambda: False)
    serving, shutdown = bootstrap.open_server("http", read)
    shutdown()
    assert seen[0].management and seen[0].management_token == token
    assert seen[0].tenancy is False


@pytest.mark.parametrize(
    ("host", "port", "env", "expected"),
    [
        (None, None, {}, ("127.0.0.1", 8000)),
        (None, None, {"TINYCONTEXT_HOST": "0.0.0.0", "TINYCONTEXT_PORT": "9001"},
         ("0.0.0.0", 9001)),
        ("::1", 7000, {"TINYCONTEXT_HOST": "0.0.0.0", "TINYCONTEXT_PORT": "9001"},
         ("::1", 7000)),
    ],
)
def test_bind_address(host: str | None, port: int | None, env: dict[str, str],
                      expected: tuple[str, int]) -> None:
    variables = settings.server_variables(env)
    assert bootstrap.bind_address(host, port, variables, "127.0.0.1", 8000) == expected


@pytest.mark.parametrize(("raw", "message"), [
    ("", "TINYCONTEXT_PORT is not a number: ''"),
    ("http", "TINYCONTEXT_PORT is not a number: 'http'"),
    ("70000", "port must be 1-65535, got 70000"),
])
def test_bad_port(raw: str, message: str) -> None:
    variables = settings.server_variables({"TINYCONTEXT_PORT": raw})
    with pytest.raises(SystemExit, match=message):
        bootstrap.bind_address(None, None, variables, "127.0.0.1", 8000)


def test_a_bad_value_names_where_it_was_set_and_what_to_do(tmp_path: Path) -> None:
    file = tmp_path / "c.json"
    file.write_text(json.dumps({"recall_top_k": "many", "profile_max_tokens": 9}))
    env = {"TINYCONTEXT_RECALL_DENSE_WEIGHT": "2", "TINYCONTEXT_ENCRYPTION_KEY": "s3cret-v4lue"}
    with pytest.raises(ConfigError) as caught:
        settings.load_config(env, file)
    message = caught.value.message
    assert f"recall_top_k (in {file})" in message
    assert "recall_dense_weight (TINYCONTEXT_RECALL_DENSE_WEIGHT)" in message
    assert "docs/reference/configuration.md" in message and "fix or unset" in message
    assert "s3cret" not in message and "many" not in message  # values are never echoed
    assert caught.value.code == "invalid_request"


def test_a_config_file_that_is_not_utf8_text_names_the_file(tmp_path: Path) -> None:
    file = tmp_path / "c.json"
    file.write_bytes(b'{"recall_top_k": "\xff"}')
    with pytest.raises(ConfigError, match="is not UTF-8 text") as caught:
        settings.load_config({}, file)
    assert str(file) in caught.value.message
