"""numpy and onnxruntime, imported lazily and one thread at a time.

Both are loaded on first use, not at `import tinycontext` (that must stay fast). But first
use can happen on several threads at once: the index-upkeep thread clusters vectors while a
request embeds its query, and the model warm-up runs beside the first request. Two threads
entering numpy's C extension together make one of them see a partially initialised module
("cannot import name '__cpu_features__' ..."), which was seen killing a first recall. Every
lazy import of them goes through one lock, so the first import completes before any other
thread touches numpy.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from types import ModuleType

_LOCK = threading.RLock()


def load(name: str) -> ModuleType:
    """The module `name`, imported under the process-wide lock the first time."""
    module = sys.modules.get(name)
    if module is not None and not _initialising(module):
        return module
    with _LOCK:
        # onnxruntime imports numpy itself; importing numpy first keeps that inside the lock.
        if name != "numpy":
            importlib.import_module("numpy")
        return importlib.import_module(name)


def numpy() -> ModuleType:
    return load("numpy")


def onnxruntime() -> ModuleType:
    # onnxruntime 1.29+ sends usage events to Microsoft and keeps a device id under
    # ~/.cache/Microsoft unless ORT_DISABLE_TELEMETRY=1 is set before it initialises.
    # TinyContext sends nothing anywhere it was not told to (and a device id written while an
    # image is built would be shared by all its containers); an explicit setting is kept.
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    return load("onnxruntime")


def _initialising(module: ModuleType) -> bool:
    spec = getattr(module, "__spec__", None)
    return bool(getattr(spec, "_initializing", False))
