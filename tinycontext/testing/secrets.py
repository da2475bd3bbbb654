"""The secret scanner every save, update and import runs, asked alone.

Before anything is stored, content goes through a scanner that replaces each recognised
secret (API keys, tokens, passwords in assignments, private keys ...) with
`[redacted:<type>]`. Asking it alone shows what it would replace in your own texts (before
an import, say) and lets a benchmark time it without a store:

    from tinycontext.testing.secrets import redact_secrets

    found = redact_secrets("deploy with token ghp_...")
    print(found.text, found.kinds)
"""

from __future__ import annotations

from tinycontext.domain.secrets import Redaction, redact


def redact_secrets(text: str) -> Redaction:
    """`text` as it would be stored (`.text`) and the type of each secret replaced, in order
    (`.kinds`; empty when nothing was)."""
    return redact(text)
