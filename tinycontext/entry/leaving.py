"""Ending a server process that stops while the embedding model is still loading.

A server loads the model in a background thread (service_source.warm_up) so the first call is
quick. Stopped during that load (Ctrl+C, SIGTERM, the client closing stdin), a normal exit
finalises the interpreter and frees what onnxruntime is still building the session from, and
onnxruntime aborts the process ("terminate called without an active exception", SIGABRT): an
exit that should be clean dies with a core-dump status. Nothing is left to do by then (every
store is closed and telemetry flushed), so the process ends at once instead.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading

from tinycontext.app.service_source import WARM_UP_THREAD


def model_loading() -> bool:
    """Whether a warm-up thread is still loading the model (or vocabulary)."""
    return any(t.name == WARM_UP_THREAD and t.is_alive() for t in threading.enumerate())


def end_process(code: int) -> int:
    """Return `code` for a normal exit, or end the process now with it while the model is
    still loading: output flushed, interpreter finalisation (and onnxruntime's abort) skipped."""
    if not model_loading():
        return code
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()
    os._exit(code)
