"""`tinycontext hook <event>`, `tinycontext context "<text>"` and `tinycontext service ...`.

The hook and context paths import only the standard library (this module, client, locate):
they run once per prompt, so they start fast and reach the model through the memory service.
A hook never fails the user's prompt: whatever goes wrong, it prints nothing and exits 0,
leaving one line (a code, never prompt or memory text) in the hooks' log.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse

from tinycontext.hooks.client import ServiceUnavailable, call

HOOK_TIMEOUT = 3.0  # seconds for one hook, a cold start of the service included
MAX_HOOK_INPUT = 4 << 20
EVENTS = ("SessionStart", "UserPromptSubmit", "BeforeAgent")
# Gemini CLI's prompt event takes the same input (`prompt`, `session_id`, `cwd`) and reads
# the same `hookSpecificOutput.additionalContext`; its SessionStart is Claude Code's.
SAME_AS = {"BeforeAgent": "UserPromptSubmit"}
HOOK_HELP = (
    "Claude Code hook (and Gemini CLI's SessionStart and BeforeAgent): reads the event's "
    "JSON on stdin and prints "
    '{"hookSpecificOutput": {"hookEventName": ..., "additionalContext": ...}} when memories '
    "are relevant, nothing otherwise. SessionStart: the profile and the project's memories; "
    "UserPromptSubmit: memories above hook_relevance_floor within hook_max_tokens, and "
    "explicit \"remember that ...\" intents saved (hook_capture). Always exits 0; errors go to "
    "the hooks log (`tinycontext service status` shows where). See docs/guides/hooks.md."
)


def add_commands(sub: Any) -> None:
    """Register hook, context and service on the central CLI's subparsers."""
    hook = sub.add_parser("hook", help="run as an agent hook (Claude Code, Gemini CLI)",
                          description=HOOK_HELP)
    hook.add_argument("event", choices=EVENTS, help="the hook event being handled")
    context = sub.add_parser(
        "context", help="print the memories relevant to a text (for scripts and other hooks)",
        description="Print the recall block a hook would inject for TEXT: memories above "
        "hook_relevance_floor within hook_max_tokens; nothing when none is relevant. Exit 0 "
        "with a block or nothing, 1 when the memory service could not answer.")
    context.add_argument("text", nargs="+", help="the prompt or text to find memories for")
    context.add_argument("--max-tokens", type=int, help="token budget (default hook_max_tokens)")
    context.add_argument("--session", help="an agent session id: memories already given to "
                         "it are not printed again")
    service = sub.add_parser(
        "service", help="the local memory service the hooks use (status, stop, run)",
        description="The memory service keeps the model loaded for hooks; it starts on the "
        "first hook, serves the store this environment names and stops after "
        "service_idle_minutes without requests.")
    service.add_argument("action", choices=("status", "stop", "run"),
                         help="status: is it running; stop: stop it; run: serve in the "
                         "foreground (what a hook starts in the background)")


def _log(environ: Mapping[str, str], what: str, code: str) -> None:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    line = f"{stamp} {what}: {code}\n"
    try:
        from tinycontext.hooks.locate import hook_log

        path = hook_log(environ)
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(handle, "a", encoding="utf-8") as out:
            out.write(line)
    except Exception:  # noqa: BLE001 - no folder to log to: stderr, which the client shows
        sys.stderr.write("tinycontext " + line)


def _hook_request(event: str, stdin: IO[str]) -> dict[str, Any]:
    payload = json.loads(stdin.read(MAX_HOOK_INPUT))
    if not isinstance(payload, dict):
        raise ValueError("the hook input is not a JSON object")
    return {"op": "hook", "event": SAME_AS.get(event, event), "prompt": payload.get("prompt"),
            "cwd": payload.get("cwd"), "session": payload.get("session_id"),
            "source": payload.get("source")}


def run_hook(event: str, stdin: IO[str], stdout: IO[str], environ: Mapping[str, str]) -> int:
    """One hook call: the block on stdout as the client's JSON, or nothing; always 0."""
    try:
        return _hook(event, stdin, stdout, environ)
    except Exception as exc:  # noqa: BLE001 - a hook never fails the user's prompt
        _log(environ, f"hook {event}", f"internal_error {type(exc).__name__}")
        return 0


def _hook(event: str, stdin: IO[str], stdout: IO[str], environ: Mapping[str, str]) -> int:
    try:
        request = _hook_request(event, stdin)
    except (ValueError, UnicodeDecodeError, OSError):
        _log(environ, f"hook {event}", "bad_input (the hook's stdin was not a JSON object)")
        return 0
    try:
        reply = call(request, environ, HOOK_TIMEOUT)
    except ServiceUnavailable as exc:
        _log(environ, f"hook {event}", str(exc))
        return 0
    if not reply.get("ok"):
        _log(environ, f"hook {event}", f"service_error {reply.get('error', 'unknown')}")
        return 0
    text = reply.get("context")
    if isinstance(text, str) and text:
        out = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}
        stdout.write(json.dumps(out) + "\n")
    return 0


def run_context(args: argparse.Namespace, stdout: IO[str], environ: Mapping[str, str]) -> int:
    request = {"op": "context", "text": " ".join(args.text), "max_tokens": args.max_tokens,
               "session": args.session}
    try:
        reply = call(request, environ, HOOK_TIMEOUT * 3)
    except ServiceUnavailable as exc:
        print(f"tinycontext context: the memory service did not answer ({exc}); see "
              "`tinycontext service status` and its log.", file=sys.stderr)
        return 1
    if not reply.get("ok"):
        print(f"tinycontext context: {reply.get('error', 'unknown')}; `tinycontext doctor` "
              "checks the configuration and store.", file=sys.stderr)
        return 1
    if reply.get("context"):
        stdout.write(reply["context"] + "\n")
    return 0


def service_state(environ: Mapping[str, str]) -> dict[str, Any] | None:
    """The running service's status for this environment, or None when none runs."""
    try:
        reply = call({"op": "status"}, environ, 2.0, start=False)
    except ServiceUnavailable:
        return None
    return reply if reply.get("ok") else None


def doctor_check(environ: Mapping[str, str]) -> tuple[str, bool, str]:
    """`tinycontext doctor`'s line about the memory service: (name, ok, detail)."""
    state = service_state(environ)
    if state is None:
        return ("memory service", True, "not running (the first hook starts it)")
    if state.get("loading"):
        return ("memory service", True, f"starting (pid {state.get('pid')})")
    if state.get("error"):
        return ("memory service", False, f"running (pid {state.get('pid')}) but cannot serve "
                f"the store: {state['error']}; fix it, then `tinycontext service stop`")
    return ("memory service", True, f"running (pid {state.get('pid')}, "
            f"{state.get('requests')} requests)")


def _wait_for_exit(pid: object, seconds: float) -> bool:
    """Wait until the process has exited (it closes its store first); False on time out."""
    if not isinstance(pid, int):
        return True
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        time.sleep(0.05)
    return False


def run_service_command(action: str, stdout: IO[str], environ: Mapping[str, str]) -> int:
    from tinycontext.hooks.locate import hook_log, locate, service_environment

    if action == "run":
        from tinycontext.hooks.server import run_service

        return run_service(environ)
    place = locate(service_environment(environ))
    state = service_state(environ)
    if action == "stop":
        if state is None:
            stdout.write("The memory service is not running.\n")
            return 0
        call({"op": "stop"}, environ, 5.0, start=False)
        gone = _wait_for_exit(state.get("pid"), 15.0)
        stdout.write(f"Stopped the memory service (pid {state.get('pid')}).\n" if gone else
                     f"Asked the memory service (pid {state.get('pid')}) to stop; it is still "
                     "finishing (closing the store).\n")
        return 0
    if state is None:
        stdout.write(f"The memory service is not running (a hook starts it). Socket: "
                     f"{place.socket}\n")
        return 3
    if state.get("loading"):
        stdout.write(f"The memory service is starting (pid {state.get('pid')}): loading the "
                     f"store and the model.\nSocket: {place.socket}\n")
        return 0
    stdout.write(f"The memory service is running: pid {state.get('pid')}, store "
                 f"{state.get('store', '-')}, {state.get('requests')} requests, stops after "
                 f"{state.get('idle_minutes'):g} idle minutes.\n")
    if state.get("error"):
        stdout.write(f"It cannot serve the store: {state['error']} (fix it, then `tinycontext "
                     "service stop`).\n")
    stdout.write(f"Socket: {place.socket}\nService log: {place.log}\nHooks log: "
                 f"{hook_log(environ)}\n")
    return 0


def fast_hook(argv: Sequence[str]) -> int | None:
    """`hook <Event>` without building the whole command line parser (it runs per prompt);
    None for anything else, which the parser handles (and explains)."""
    if len(argv) == 2 and argv[0] == "hook" and argv[1] in EVENTS:
        return run_hook(argv[1], sys.stdin, sys.stdout, os.environ)
    return None


def run(args: argparse.Namespace) -> int:
    environ = os.environ
    if args.command == "hook":
        return run_hook(args.event, sys.stdin, sys.stdout, environ)
    if args.command == "context":
        return run_context(args, sys.stdout, environ)
    return run_service_command(args.action, sys.stdout, environ)


COMMANDS = {"hook": run, "context": run, "service": run}
