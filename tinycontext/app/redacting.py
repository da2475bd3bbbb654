"""Secrets are never stored: save and update run content through here (import does the same
in transfer.py), unless `redact_secrets` is off."""

from __future__ import annotations

from tinycontext.config.engine import TinyContextConfig
from tinycontext.domain.labels import Metadata, Redactor, check_metadata, check_tags
from tinycontext.domain.secrets import Redaction, redact


def redact_content(config: TinyContextConfig, text: str) -> Redaction:
    """`text` with recognisable secrets replaced (unchanged when redaction is off)."""
    return redact(text) if config.redact_secrets else Redaction(text)


def label_redactor(config: TinyContextConfig) -> Redactor:
    """What tags and metadata (keys and string values) go through before they are checked."""
    if not config.redact_secrets:
        return lambda text: (text, ())

    def run(text: str) -> tuple[str, tuple[str, ...]]:
        found = redact(text)
        return found.text, found.kinds

    return run


def checked_labels(
    config: TinyContextConfig, tags: object, metadata: object, what: str = ""
) -> tuple[tuple[str, ...], Metadata, tuple[str, ...]]:
    """Tags and metadata checked and redacted, with the kinds of secret replaced in them."""
    redactor = label_redactor(config)
    kinds: list[str] = []
    checked_tags = check_tags(tags, what=f"{what}tags", redactor=redactor, kinds=kinds)
    checked_meta = check_metadata(metadata, what=f"{what}metadata", redactor=redactor,
                                  kinds=kinds)
    return checked_tags, checked_meta, tuple(kinds)
