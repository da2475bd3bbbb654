"""numpy and onnxruntime loaded from many threads at once in a fresh interpreter.

The first recall on an existing store once died with "cannot import name '__cpu_features__'
from partially initialized module": the upkeep thread imported numpy while the request thread
imported onnxruntime (which imports numpy). tinycontext.native serialises those imports.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import sys, threading
    import tinycontext
    assert "numpy" not in sys.modules, "import tinycontext must not load numpy"
    from tinycontext import native

    start = threading.Barrier(8)
    failures = []

    def work(index):
        start.wait()
        try:
            if index % 2:
                native.onnxruntime().get_available_providers()
            else:
                native.numpy().zeros(3).sum()
        except BaseException as exc:
            failures.append(repr(exc))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("FAILURES", failures)
    sys.exit(1 if failures else 0)
    """
)


def test_concurrent_first_imports_all_succeed() -> None:
    for _ in range(3):  # a race: a few fresh interpreters make a lucky pass unlikely
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout + done.stderr
