"""What a server process reads at start-up (SPEC sections 5 and 8), with pydantic-settings.

Engine settings: the defaults, then the JSON file (`context_config.json` in the per-user
config folder, or the file TINYCONTEXT_CONFIG_FILE names), then one TINYCONTEXT_<KEY>
variable per key. Server variables (address, log level, allowed hosts, hosted mode,
management): TINYCONTEXT_* only, read raw here and validated together in tinycontext.hosted.serving
so that one refused start-up lists every problem. A TINYCONTEXT_* name that is neither is a
typo and stops start-up.

This module is the only one that reads the process environment (`environment()`); the
bootstrap hands what it read to everything else. `TinyContextConfig(...)` built in code
never comes here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from tinycontext.config.engine import (
    CONFIG_FILE_NAME,
    ENV_PREFIX,
    ConfigError,
    TinyContextConfig,
    read_config_file,
    user_config_dir,
)


def environment() -> Mapping[str, str]:
    """The process environment. Read here only (tests/unit/test_environment_reads.py)."""
    return os.environ


@dataclass(frozen=True)
class _Inputs:
    environ: Mapping[str, str]
    config_file: Path | None  # None: server variables only, no file


# settings_customise_sources is a class method: the environment and file of this one load
# reach it through a context variable (set and reset around the load, so threads and tasks
# loading at once never see each other's inputs).
_INPUTS: ContextVar[_Inputs | None] = ContextVar("tinycontext_settings_inputs", default=None)


def _inputs() -> _Inputs:
    return _INPUTS.get() or _Inputs(environment(), config_file_path(environment()))


class Variables(EnvSettingsSource):
    """The library's environment source over a given mapping (the process's, or a test's).

    Only names that start with TINYCONTEXT_ exactly count; `exact_case` keeps the server
    names upper-case as SPEC writes them (engine keys were always case-insensitive).
    """

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str],
                 exact_case: bool = False) -> None:
        self._environ, self._exact_case = environ, exact_case
        super().__init__(settings_cls, case_sensitive=False, env_prefix=ENV_PREFIX)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return {
            name.lower(): value for name, value in self._environ.items()
            if name.startswith(ENV_PREFIX) and (not self._exact_case or name == name.upper())
        }


class JsonConfigFile(PydanticBaseSettingsSource):
    """context_config.json: an object of engine keys; relative paths resolve against it."""

    def __init__(self, settings_cls: type[BaseSettings], path: Path | None) -> None:
        super().__init__(settings_cls)
        self._values = read_config_file(path) if path is not None and path.is_file() else {}

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return self._values.get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(self._values)


class UnknownNames(PydanticBaseSettingsSource):
    """Adds nothing: refuses a TINYCONTEXT_* name that no setting has (a typo would otherwise
    be ignored silently and the default used)."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        super().__init__(settings_cls)
        self._environ = environ

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        known = set(EngineSettings.model_fields) | set(ServerVariables.model_fields)
        for name in self._environ:
            if name.startswith(ENV_PREFIX) and name[len(ENV_PREFIX):].lower() not in known:
                raise ConfigError(f"unknown environment variable {name}; check its spelling.")
        return {}


class EngineSettings(BaseSettings, TinyContextConfig):
    """TinyContextConfig's keys from the JSON file and the environment (server processes)."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, frozen=True, extra="forbid",
                                      validate_default=True, hide_input_in_errors=True)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # First wins: the environment over the file over the defaults. UnknownNames runs
        # last, so a broken file is reported before a misspelt variable (as before).
        inputs = _inputs()
        return (init_settings, Variables(settings_cls, inputs.environ),
                JsonConfigFile(settings_cls, inputs.config_file),
                UnknownNames(settings_cls, inputs.environ))


class ServerVariables(BaseSettings):
    """The server processes' TINYCONTEXT_* names, as written (validated in
    tinycontext.hosted.serving and the CLI, which name every bad one)."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, frozen=True, extra="ignore")

    host: str = ""
    port: str | None = None  # set but empty is a bad port, not the default
    log_level: str = ""
    config_file: str = ""
    allowed_hosts: str = ""
    tenancy: str = ""
    tenant_secret: str = Field(default="", repr=False)
    tenant_store_dir: str = ""
    trusted_proxy_cidrs: str = ""
    trusted_proxy_token: str = Field(default="", repr=False)
    allow_broad_trusted_proxies: str = ""
    user_header: str = ""
    max_open_stores: str = ""
    management: str = ""
    management_token: str = Field(default="", repr=False)
    # The engine key, read here too: hosted mode keeps every user in PostgreSQL when it is set.
    store_url: str = Field(default="", repr=False)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, Variables(settings_cls, _inputs().environ, exact_case=True))


def config_file_path(environ: Mapping[str, str]) -> Path:
    """The JSON file: TINYCONTEXT_CONFIG_FILE, else the per-user config folder's."""
    named = environ.get(ENV_PREFIX + "CONFIG_FILE")
    return Path(named).expanduser() if named else user_config_dir() / CONFIG_FILE_NAME


def load_config(
    environ: Mapping[str, str] | None = None, config_file: Path | None = None
) -> TinyContextConfig:
    """Defaults, then the JSON file (if present), then the environment — for server processes."""
    env = dict(environment() if environ is None else environ)
    path = config_file if config_file is not None else config_file_path(env)
    token = _INPUTS.set(_Inputs(env, path))
    try:
        settings = EngineSettings()
    except ValidationError as exc:
        raise ConfigError(
            f"Invalid configuration: {_located(exc, env, path)}; fix or unset it (every "
            "setting and its range: docs/reference/configuration.md)."
        ) from exc
    finally:
        _INPUTS.reset(token)
    # A plain TinyContextConfig: equal to (and hashed like) one built in code.
    return TinyContextConfig(**settings.model_dump())


def _located(error: ValidationError, env: Mapping[str, str], path: Path) -> str:
    """Each bad key with where it was set (the variable, else the file); never its value,
    which may be a key or a password."""
    file_keys = set(read_config_file(path)) if path.is_file() else set()
    parts = []
    for item in error.errors():
        key = ".".join(str(p) for p in item["loc"])
        named = [n for n in env if n.lower() == (ENV_PREFIX + key).lower()] if key else []
        where = named[0] if named else f"in {path}" if key in file_keys else ""
        label = f"{key} ({where})" if where else key or "config"
        parts.append(f"{label}: {item['msg']}")
    return "; ".join(parts)


def server_variables(environ: Mapping[str, str] | None = None) -> ServerVariables:
    """The server names from this mapping (default: the process environment)."""
    env = environment() if environ is None else environ
    token = _INPUTS.set(_Inputs(env, None))
    try:
        return ServerVariables()
    finally:
        _INPUTS.reset(token)
