"""Validated, immutable configuration (SPEC section 5).

`TinyContextConfig(...)` built in code never reads the environment. Server processes call
`load_config()`, which layers `context_config.json` from the per-user config directory and
then `TINYCONTEXT_*` environment variables (one per key) over the defaults: that layer is
tinycontext/settings.py (pydantic-settings), imported only when a process asks for it. The
model itself lives in tinycontext/engine_config.py (which the settings build on).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from tinycontext.engine_config import (
    APP_NAME,
    CONFIG_FILE_NAME,
    ENV_PREFIX,
    ConfigError,
    TinyContextConfig,
    build_config,
    describe_error,
    read_config_file,
    user_config_dir,
    user_data_dir,
)

__all__ = [
    "APP_NAME", "CONFIG_FILE_NAME", "ENV_PREFIX", "ConfigError", "TinyContextConfig",
    "build_config", "describe_error", "load_config", "read_config_file", "user_config_dir",
    "user_data_dir",
]


def load_config(
    environ: Mapping[str, str] | None = None, config_file: Path | None = None
) -> TinyContextConfig:
    """Defaults, then the JSON file (if present), then the environment — for server processes
    (see tinycontext.settings; `environ` None: the process environment)."""
    from tinycontext.settings import load_config as load

    return load(environ, config_file)
