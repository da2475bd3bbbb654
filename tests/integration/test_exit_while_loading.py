"""A server that stops while its embedding model still loads in the background ends cleanly.

Without entry.leaving (the console script and `python -m tinycontext` end through it),
finalising the interpreter under a thread that is building an onnxruntime session aborts the
process ("terminate called without an active exception"):
Ctrl+C a few seconds after `tinycontext` starts on a terminal died that way now and then.
The child here keeps a warm-up thread building real sessions, so every exit lands mid-load."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from tests.e2e.servers import cli_env

pytestmark = pytest.mark.slow

CHILD = textwrap.dedent("""
    import sys, threading, time
    from tinycontext.app.service_source import WARM_UP_THREAD
    from tinycontext.entry.container import build_service
    from tinycontext.entry.leaving import end_process

    loading, took = threading.Event(), []

    def load():
        while True:  # a fresh service each time: each builds its own onnxruntime session
            started = time.monotonic()
            loading.set()
            build_service().embedder.embed(["warm up"])
            took.append(time.monotonic() - started)

    threading.Thread(target=load, name=WARM_UP_THREAD, daemon=True).start()
    while not took:
        time.sleep(0.05)
    loading.clear()
    loading.wait(120)
    time.sleep(took[0] * 0.3)  # inside the next session's construction
    print("stopping", flush=True)
    sys.exit(end_process(7))
""")


@pytest.mark.parametrize("attempt", range(3))
def test_a_server_ending_mid_load_exits_with_its_code(tmp_path: Path, attempt: int) -> None:
    done = subprocess.run([sys.executable, "-c", CHILD], env=cli_env(tmp_path),
                          capture_output=True, text=True, timeout=180)
    assert done.stdout == "stopping\n", done.stderr[-2000:]  # flushed before the early end
    assert "terminate called" not in done.stderr, done.stderr[-2000:]
    assert done.returncode == 7, done.stderr[-2000:]


def test_nothing_loading_is_an_ordinary_return() -> None:
    from tinycontext.app.service_source import WARM_UP_THREAD
    from tinycontext.entry.leaving import end_process, model_loading

    assert not model_loading()
    assert end_process(3) == 3
    finished = threading.Thread(target=lambda: None, name=WARM_UP_THREAD)
    finished.start()
    finished.join()
    assert not model_loading() and end_process(0) == 0  # a finished warm-up holds nothing


def test_the_command_ends_through_it() -> None:
    from importlib.metadata import entry_points

    (script,) = entry_points(group="console_scripts", name="tinycontext")
    assert script.value == "tinycontext.entry.cli:console"
    main_module = Path(__file__).parents[2] / "tinycontext" / "__main__.py"
    assert "console()" in main_module.read_text(encoding="utf-8")
