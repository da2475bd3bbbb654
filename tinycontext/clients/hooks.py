"""Claude Code's hooks for TinyContext, merged into a settings.json text beside the user's own.

The settings schema (code.claude.com/docs/en/hooks): `hooks` maps an event name to a list of
matcher groups `{"matcher"?: str, "hooks": [{"type": "command", "command": str,
"timeout"?: seconds}]}`; SessionStart and UserPromptSubmit need no matcher. Ours is one group
per event holding one command `<tinycontext> hook <Event>`; a hook is ours when its command
runs a `tinycontext` executable with `hook <Event>`, so a reinstall at another path is updated
in place instead of added twice. Pure: text in, text out."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tinycontext.clients import jsonedit, jsonmerge
from tinycontext.clients.jsontext import Node, parse, position

EVENTS = ("SessionStart", "UserPromptSubmit")
TIMEOUT_SECONDS = 10


@dataclass(frozen=True)
class HookSet:
    """One client's hook settings: its events, the timeout in its own unit, whether its file
    is JSONC, and fields each hook of ours carries besides type, command and timeout."""

    title: str
    events: tuple[str, ...]
    timeout: int
    comments: bool = False
    extra: tuple[tuple[str, str], ...] = ()


CLAUDE = HookSet("Claude Code", EVENTS, TIMEOUT_SECONDS)
# Gemini CLI's hooks reference (google-gemini/gemini-cli's hooks/reference.md): the same
# `hooks` object of event -> matcher groups in its settings.json (JSONC), SessionStart and
# BeforeAgent (its prompt event), `timeout` in milliseconds, an optional `name`.
GEMINI = HookSet("Gemini CLI", ("SessionStart", "BeforeAgent"), TIMEOUT_SECONDS * 1000,
                 comments=True, extra=(("name", "tinycontext"),))
_OURS = re.compile(r"""(?:^|[\s/\\'"])tinycontext(?:\.exe)?['"]?\s+hook\s+(\w+)\s*$""")


def hook_command(launcher: str, event: str) -> str:
    """The command line Claude Code runs: `launcher` is the quoted tinycontext command."""
    return f"{launcher} hook {event}"


def hook_entry(launcher: str, event: str, kind: HookSet = CLAUDE) -> dict[str, Any]:
    return {"type": "command", "command": hook_command(launcher, event),
            "timeout": kind.timeout, **dict(kind.extra)}


def ours(hook: Any, event: str) -> bool:
    if not isinstance(hook, dict) or hook.get("type") != "command":
        return False
    found = _OURS.search(str(hook.get("command", "")))
    return found is not None and found.group(1) == event


def _our_hooks(text: str, event: str, comments: bool = False,
               ) -> tuple[Node | None, list[tuple[Node, Node, int]]]:
    """The event's group array and each (group, group's hooks array, index) holding ours."""
    root = parse(text, comments) if text.strip() else None
    if root is None or root.kind != "object":
        return None, []
    hooks = root.get("hooks")
    array = hooks.get(event) if hooks is not None and hooks.kind == "object" else None
    if array is None or array.kind != "array":
        return None, []
    found = []
    for group in array.items:
        inner = group.get("hooks") if group.kind == "object" else None
        if inner is None or inner.kind != "array":
            continue
        found += [(group, inner, i) for i, h in enumerate(inner.items) if ours(h.plain(), event)]
    return array, found


def installed(text: str, kind: HookSet = CLAUDE) -> list[str]:
    """The events whose hook of ours is present."""
    return [event for event in kind.events if _our_hooks(text, event, kind.comments)[1]]


def _shape(text: str, kind: HookSet = CLAUDE) -> None:
    """Refuse a `hooks` of the wrong type before touching it (named with its line)."""
    jsonmerge.lookup(text, (), comments=kind.comments)
    root = parse(text, kind.comments) if text.strip() else None
    hooks = root.get("hooks") if root is not None else None
    if hooks is None:
        return
    if hooks.kind != "object":
        raise jsonmerge.ConfigShapeError('"hooks" should be an object', *_at(text, hooks))
    for event in kind.events:
        array = hooks.get(event)
        if array is not None and array.kind != "array":
            raise jsonmerge.ConfigShapeError(f'"hooks"."{event}" should be a list',
                                             *_at(text, array))


def _at(text: str, node: Node) -> tuple[int, int]:
    return position(text, node.start)


def install(text: str, launcher: str, kind: HookSet = CLAUDE) -> str:
    """Text with exactly one hook of ours per event, the user's hooks untouched."""
    _shape(text, kind)
    for event in kind.events:
        wanted = hook_entry(launcher, event, kind)
        array, found = _our_hooks(text, event, kind.comments)
        if not found:
            group = {"hooks": [wanted]}
            if array is None:
                text = jsonmerge.set_value(text, ("hooks", event), [group],
                                           comments=kind.comments)
            else:
                text = jsonedit.insert(text, array, jsonedit.item_text(text, array, group))
            continue
        for _ in found[1:]:  # duplicates of ours (e.g. copied by hand) collapse into one
            text = _remove_one(text, event, keep_first=True, comments=kind.comments)
        _, found = _our_hooks(text, event, kind.comments)
        _, inner, index = found[0]
        node = inner.items[index]
        merged = {**node.plain(), **wanted}
        if merged != node.plain():
            text = jsonedit.replace(text, node, merged, jsonedit.is_compact(text, inner))
    return text


def _remove_one(text: str, event: str, keep_first: bool = False, comments: bool = False) -> str:
    array, found = _our_hooks(text, event, comments)
    if array is None or len(found) <= (1 if keep_first else 0):
        return text
    group, inner, index = found[-1]
    if len(inner.items) > 1:
        return jsonedit.remove(text, inner, index)
    keys = [m.key for m in group.members]
    if keys != ["hooks"] and set(keys) - {"hooks", "matcher"}:
        return jsonedit.remove(text, inner, index)  # a group with more in it keeps its shape
    text = jsonedit.remove(text, array, array.items.index(group))
    if not parse(text, comments).get("hooks").get(event).items:  # type: ignore[union-attr]
        text = jsonmerge.delete(text, ("hooks", event), comments=comments, prune=1)
    return text


def uninstall(text: str, kind: HookSet = CLAUDE) -> str:
    """Text without any hook of ours; groups and events left empty by that go too."""
    _shape(text, kind)
    for event in kind.events:
        while _our_hooks(text, event, kind.comments)[1]:
            text = _remove_one(text, event, comments=kind.comments)
    return text
