"""The REST app's earlier import path, kept so `uvicorn tinycontext.adapters.rest_api:app`
keeps working: `app` is the one `tinycontext.rest:app` builds (the canonical path)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastapi import FastAPI


def __getattr__(name: str) -> FastAPI:
    if name == "app":  # built on first access, by tinycontext.rest
        from tinycontext import rest

        return rest.app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
