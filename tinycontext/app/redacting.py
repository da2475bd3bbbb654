"""Secrets are never stored: save and update run content through here (import does the same
in transfer.py), unless `redact_secrets` is off."""

from __future__ import annotations

from tinycontext.config.engine import TinyContextConfig
from tinycontext.domain.secrets import Redaction, redact


def redact_content(config: TinyContextConfig, text: str) -> Redaction:
    """`text` with recognisable secrets replaced (unchanged when redaction is off)."""
    return redact(text) if config.redact_secrets else Redaction(text)
