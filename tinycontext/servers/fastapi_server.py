"""The earlier release's REST import path: `uvicorn tinycontext.servers.fastapi_server:app`
serves the app `tinycontext.rest:app` builds (the canonical path)."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name == "app":  # built on first access, by tinycontext.rest
        from tinycontext import rest

        return rest.app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
