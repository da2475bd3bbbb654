"""A file copy of a large vector mirror, so a fresh process answers its first recall quickly.

Loading a mirror from SQL reads every `vector_index` row through Python: a store's first
search at 120,000 vectors took 2.4 s that way and 0.97 s from this copy (loaded 2-core
machine; the mirror holds up to ~430,000 vectors, ~190 MB of arrays). The copy sits next to
the store (`<store>-mirror<model id>`, owner-only) and is written after a mirror was loaded
from SQL and when a store closes with changes since; a fresh process restores it, then
applies the `vector_log` entries written since, exactly as a running mirror catches up
between searches. It is a cache: no file, another format, another model, a log pruned past
it, or counts that disagree with the table mean a load from SQL.

The arrays hold what `vector_index` holds (sign bits and int8 codes of the vectors); like the
store's own freed pages they may keep a deleted memory's codes until the next rewrite.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tinycontext import native

FORMAT = 2  # 2: each slot's IVF tag too (mirror_cells.py)
# Below this many vectors a load from SQL takes well under a second: no file is written.
MIN_ROWS = 100_000


def path_for(store: Path, model_id: int) -> Path:
    return store.with_name(f"{store.name}-mirror{int(model_id)}")


def save(path: Path, meta: dict[str, Any], arrays: list[Any]) -> bool:
    """Write `meta` and `arrays` atomically (a temporary file renamed over the old copy);
    False when the folder cannot be written (a read-only store keeps loading from SQL)."""
    np = native.numpy()

    # Named per writer: two processes (or threads) saving at once never share a file.
    temporary = path.with_name(f"{path.name}.{os.getpid()}-{threading.get_ident()}.tmp")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as out:
            header = json.dumps({"format": FORMAT, **meta}).encode()
            np.save(out, np.frombuffer(header, np.uint8), allow_pickle=False)
            for array in arrays:
                np.save(out, np.ascontiguousarray(array), allow_pickle=False)
        os.replace(temporary, path)
        return True
    except OSError:
        temporary.unlink(missing_ok=True)
        return False


def load(path: Path, model_id: int, arrays_for: Callable[[dict[str, Any]], list[Any] | None]
         ) -> dict[str, Any] | None:
    """Read a copy written for `model_id` straight into the arrays `arrays_for(meta)` gives
    (no second copy of ~450 MB at 1,000,000 vectors); the meta, or None for anything else
    (then the arrays hold nothing to trust)."""
    np = native.numpy()

    try:
        with open(path, "rb") as source:
            meta: dict[str, Any] = json.loads(np.load(source, allow_pickle=False).tobytes())
            if meta.get("format") != FORMAT or meta.get("model_id") != model_id:
                return None
            targets = arrays_for(meta)
            if targets is None:
                return None
            for target in targets:
                if not _read_into(source, target):
                    return None
    except (OSError, ValueError, EOFError, KeyError, TypeError):  # missing, truncated, not ours
        return None
    return meta


def _read_into(source: Any, target: Any) -> bool:
    """One array as np.save wrote it, into `target` (same shape and type; rows contiguous)."""
    np = native.numpy()

    version = np.lib.format.read_magic(source)
    header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
              else np.lib.format.read_array_header_2_0)
    shape, fortran, dtype = header(source)
    if fortran or tuple(shape) != target.shape or np.dtype(dtype) != target.dtype:
        return False
    rows = [target] if target.flags.c_contiguous else list(target)
    for row in rows:
        into = memoryview(row).cast("B")
        if source.readinto(into) != len(into):
            return False
    return True
