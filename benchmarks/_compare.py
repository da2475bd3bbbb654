"""Settings variants recalled on the same store (`--compare`): off/on pairs on identical data.

A benchmark that builds one store and asks its questions can also ask each of them again with
other recall settings, swapped into the running service for that one recall: each variant is
then compared with the default on exactly the same memories, which two separate runs (each
with its own ingest, dedup and keyword statistics) cannot promise. Only settings read at recall
time make sense here (recall_*); those read at save or open (models, save-time context) would
need a store of their own.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Sequence
from typing import Any


def parse_compare(specs: Sequence[str]) -> dict[str, dict[str, Any]]:
    """`KEY=VALUE[,KEY=VALUE...]` per variant -> {label: settings}; each is checked against
    the settings model now, so a typo fails before the store is built."""
    from tinycontext import TinyContextConfig

    variants: dict[str, dict[str, Any]] = {}
    for spec in specs:
        update: dict[str, Any] = {}
        for item in spec.split(","):
            key, sep, raw = item.partition("=")
            if not sep or not key.strip():
                raise SystemExit(f"--compare expects KEY=VALUE[,KEY=VALUE...], got {spec!r}")
            try:
                update[key.strip()] = json.loads(raw)
            except json.JSONDecodeError:
                update[key.strip()] = raw
        unknown = set(update) - set(TinyContextConfig.model_fields)
        if unknown:
            raise SystemExit(f"--compare: unknown setting(s) {sorted(unknown)} in {spec!r}")
        TinyContextConfig(**update)  # validates the values (raises with the setting's name)
        variants[f"with {spec}"] = update
    return variants


@contextlib.contextmanager
def settings_swapped(service: Any, update: dict[str, Any]) -> Iterator[None]:
    """The service's recall reads `update` over its settings until the block ends."""
    base = service.core.config
    service.core.config = base.model_copy(update=update)
    try:
        yield
    finally:
        service.core.config = base
