"""Our server entry and Claude Code hooks merged into (or taken out of) a JSON/JSONC config
text. Pure: text in, text out. Nothing else in the file moves: edits are spliced into the
original text (tinycontext.clients.jsonedit), so other entries keep their order, formatting and
comments."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tinycontext.clients import jsonedit
from tinycontext.clients.catalog import TRANSPORT_KEYS
from tinycontext.clients.jsontext import ConfigSyntaxError, Node, parse, position


class ConfigShapeError(ConfigSyntaxError):
    """Readable JSON, but not the shape the client documents (e.g. servers not an object)."""


def _root(text: str, comments: bool) -> Node:
    if text.strip("\ufeff \t\r\n") == "":
        return Node("object", 0, 0)
    root = parse(text, comments)
    _require_object(text, root, "the file")
    return root


def _require_object(text: str, node: Node, what: str) -> None:
    if node.kind != "object":
        line, column = position(text, node.start)
        raise ConfigShapeError(f"{what} should be a JSON object, found {node.kind}", line, column)


def _walk(text: str, root: Node, path: tuple[str, ...]) -> tuple[Node, int]:
    """The deepest existing object along `path` and how many keys of it exist."""
    node, depth = root, 0
    for key in path:
        found = node.get(key)
        if found is None:
            break
        _require_object(text, found, f'"{key}"')
        node, depth = found, depth + 1
    return node, depth


def lookup(text: str, path: tuple[str, ...], comments: bool) -> Any:
    """The plain value at `path`, None when absent (an empty file is `{}`)."""
    root = _root(text, comments)
    parent, depth = _walk(text, root, path[:-1])
    if depth < len(path) - 1:
        return None
    found = parent.get(path[-1]) if path else root
    return None if found is None else found.plain()


def set_value(text: str, path: tuple[str, ...], value: Any, comments: bool) -> str:
    """Text with `value` at `path` (objects created on the way; the last key replaced)."""
    if text.strip("\ufeff \t\r\n") == "":
        nested: Any = value
        for key in reversed(path):
            nested = {key: nested}
        return jsonedit.dump(nested, "  ", "") + "\n"
    root = _root(text, comments)
    parent, depth = _walk(text, root, path[:-1])
    if depth == len(path) - 1:
        existing = parent.get(path[-1])
        if existing is not None:
            return jsonedit.replace(text, existing, value, jsonedit.is_compact(text, parent))
    nested = value
    for key in reversed(path[depth + 1:]):
        nested = {key: nested}
    return jsonedit.insert(text, parent, jsonedit.member_text(text, parent, path[depth], nested))


def delete(text: str, path: tuple[str, ...], comments: bool, prune: int = 0) -> str:
    """Text without the member at `path`; then up to `prune` parents left empty go too."""
    root = _root(text, comments)
    parent, depth = _walk(text, root, path[:-1])
    if depth < len(path) - 1:
        return text
    indexes = [i for i, m in enumerate(parent.members) if m.key == path[-1]]
    for index in reversed(indexes):  # a repeated key goes entirely
        text = jsonedit.remove(text, parent, index)
        parent, _ = _walk(text, _root(text, comments), path[:-1])
    if indexes and prune and len(path) > 1 and not parent.members:
        return delete(text, path[:-1], comments, prune - 1)
    return text


def merged_entry(existing: Any, wanted: dict[str, Any],
                 defaults: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """`wanted` over an existing entry: the user's own keys (env, timeouts ...) stay;
    `defaults` fill only keys the entry lacks (a user's narrower choice is kept)."""
    kept = {} if not isinstance(existing, dict) else {
        k: v for k, v in existing.items() if k not in TRANSPORT_KEYS or k in wanted}
    merged = {**kept, **wanted}
    for key, value in (defaults or {}).items():
        merged.setdefault(key, value)
    return merged


def is_empty_document(text: str, comments: bool) -> bool:
    """Nothing left but `{}` (no comments either): the file can go."""
    if text.strip("\ufeff \t\r\n") == "":
        return True
    try:
        root = parse(text, comments)
    except ConfigSyntaxError:
        return False
    return root.kind == "object" and not root.members and text.strip() == "{}"
