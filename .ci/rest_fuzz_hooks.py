"""Schemathesis hooks for .ci/rest_fuzz.py: the rules between two values that OpenAPI cannot
state, applied to generated list requests so the run tests everything else about them.

- `sort=relevance` needs search keywords. The POST body schema says so (if/then); the GET form
  has separate query parameters, and OpenAPI has no rule between two of them. Such a GET asks
  for the default order instead.
- `since` must not be after `until` (no JSON Schema keyword compares two values): such a pair
  is swapped. The engine refuses both with a 400 that says how to fix the request.
Only values the schema allows are touched, so a case meant to break the schema stays broken.
"""

from __future__ import annotations

import re
from typing import Any

import schemathesis

from tinycontext.domain.errors import TinyContextError
from tinycontext.domain.memory import parse_instant

_KEYWORD = re.compile(r"[^\W_]")


def _instant(value: Any, end_of_day: bool) -> Any:
    try:
        return parse_instant(value, field="x", end_of_day=end_of_day)
    except TinyContextError:
        return None


@schemathesis.hook
def before_call(ctx: Any, case: Any, **kwargs: Any) -> None:
    if case.path != "/list_memories":
        return
    get = case.method.upper() == "GET"
    params = case.query if get else case.body
    if not isinstance(params, dict):
        return
    search = params.get("search")
    if get and params.get("sort") == "relevance" and not (
        isinstance(search, str) and _KEYWORD.search(search)
    ):
        params["sort"] = "recent"
    since, until = _instant(params.get("since"), False), _instant(params.get("until"), True)
    if since is not None and until is not None and since > until:
        params["since"], params["until"] = params["until"], params["since"]
