"""Schemathesis hooks for .ci/rest_fuzz.py: the rules between two values that OpenAPI cannot
state, applied to generated list requests so the run tests everything else about them.

- `sort=relevance` needs search keywords. The POST body schema says so (if/then); the GET form
  has separate query parameters, and OpenAPI has no rule between two of them. Such a GET asks
  for the default order instead.
- `since` must not be after `until` (no JSON Schema keyword compares two values): such a pair
  is swapped, in list and recall alike. The engine refuses both with a 400 that says how to fix
  the request.
- A GET `metadata` parameter holds a JSON object as text (its schema can say only "a string of
  media type application/json"): text that is not one becomes a one-pair object holding it.
- Metadata keys: the schema states their rule as `propertyNames` (printable, not blank, at most
  64 characters), which the generator does not apply; the hook applies it to generated keys.
Only values the schema allows are touched, so a case meant to break the schema stays broken.
"""

from __future__ import annotations

import json
import re
from typing import Any

import schemathesis

from tinycontext.domain.errors import TinyContextError
from tinycontext.domain.memory import parse_instant

_KEYWORD = re.compile(r"[^\W_]")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_FILTERED = ("/list_memories", "/recall_memories")


def _key(key: str, at: int) -> str:
    clean = _CONTROL.sub("", key)[:64]
    return clean if clean.strip() else f"key{at}"


def _keys(metadata: Any) -> Any:
    if not isinstance(metadata, dict):
        return metadata
    return {_key(str(k), at): v for at, (k, v) in enumerate(metadata.items())}


def _object_text(text: Any) -> Any:
    if not isinstance(text, str) or not text.strip():
        return text
    try:
        if isinstance(json.loads(text), dict):
            return text
    except ValueError:
        pass
    return json.dumps({"note": text})


def _instant(value: Any, end_of_day: bool) -> Any:
    try:
        return parse_instant(value, field="x", end_of_day=end_of_day)
    except TinyContextError:
        return None


@schemathesis.hook
def before_call(ctx: Any, case: Any, **kwargs: Any) -> None:
    get = case.method.upper() == "GET"
    params = case.query if get else case.body
    if not isinstance(params, dict):
        return
    if isinstance(params.get("metadata"), dict):
        params["metadata"] = _keys(params["metadata"])
    for item in params.get("memories") or []:
        if isinstance(item, dict) and isinstance(item.get("metadata"), dict):
            item["metadata"] = _keys(item["metadata"])
    if case.path not in _FILTERED:
        return
    if get and "metadata" in params:
        params["metadata"] = _object_text(params["metadata"])
    search = params.get("search")
    if case.path == "/list_memories" and get and params.get("sort") == "relevance" and not (
        isinstance(search, str) and _KEYWORD.search(search)
    ):
        params["sort"] = "recent"
    since, until = _instant(params.get("since"), False), _instant(params.get("until"), True)
    if since is not None and until is not None and since > until:
        params["since"], params["until"] = params["until"], params["since"]
