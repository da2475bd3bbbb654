"""Secrets are never stored: save and update run content through here (import does the same
in tinycontext/export_import.py), unless `redact_secrets` is off."""

from __future__ import annotations

from typing import Any

from tinycontext.config import TinyContextConfig
from tinycontext.domain.secrets import Redaction, redact


def redact_content(config: TinyContextConfig, text: str) -> Redaction:
    """`text` with recognisable secrets replaced (unchanged when redaction is off)."""
    return redact(text) if config.redact_secrets else Redaction(text)


def add_notice(result: dict[str, Any], notice: str | None) -> None:
    """Append `notice` to the result's (or one saved item's) notice."""
    if notice:
        result["notice"] = f"{result['notice']} {notice}" if result.get("notice") else notice
