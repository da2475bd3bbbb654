"""Jinja2 templates with autoescaping on for every template (memory content is text, never
HTML) and the few helpers the pages share."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.requests import Request

from .text import highlight


def _query(values: dict[str, Any], **changes: Any) -> str:
    """A query string from the current filters with some changed (empty ones left out)."""
    merged = {**values, **changes}
    return urlencode({k: v for k, v in merged.items() if v not in (None, "", False)})


class Renderer:
    def __init__(self, folder: Path) -> None:
        self.env = Environment(
            loader=FileSystemLoader(str(folder)),
            autoescape=select_autoescape(default=True, default_for_string=True),
            trim_blocks=True, lstrip_blocks=True,
        )
        self.env.filters["highlight"] = highlight
        self.env.globals["query"] = _query

    def __call__(self, request: Request, name: str, **values: Any) -> str:
        state = request.scope.get("state") or {}
        return self.env.get_template(name).render(
            base=request.scope.get("root_path", ""), csrf=state.get("csrf", ""),
            path=request.url.path, **values)
