"""Embedder contract (ports/embedder.py) for the HashEmbedder fake and the ONNX adapter."""

from __future__ import annotations

import math
from array import array
from functools import lru_cache

import pytest

from tests.fakes import HashEmbedder
from tinycontext.ports.embedder import Embedder

TEXTS = ["The project uses SQLite for local state.", "hello", "我爱北京 🍕", "v2.3.1 on 3 March",
         "a much longer sentence " * 10]


@lru_cache(maxsize=1)
def _onnx(models_dir: str) -> Embedder:
    from pathlib import Path

    from tinycontext.adapters.embedding.models import create_embedder

    return create_embedder("balanced", Path(models_dir), 32)


@pytest.fixture(params=["hash", "onnx"])
def embedder(request, tmp_path_factory) -> Embedder:
    if request.param == "hash":
        return HashEmbedder()
    pytest.importorskip("tinycontext.adapters.embedding.models")
    # One loaded model for the whole module keeps the suite fast.
    return _onnx(str(tmp_path_factory.getbasetemp() / "models"))


def floats(vector: bytes) -> list[float]:
    return list(array("f", vector))


def test_implements_the_port(embedder):
    assert isinstance(embedder, Embedder)


def test_model_key_is_a_stable_non_empty_string(embedder):
    key = embedder.model_key
    assert isinstance(key, str) and key.strip() == key and key
    embedder.embed(["load the model"])
    assert embedder.model_key == key


def test_dimensions_match_vector_length(embedder):
    assert isinstance(embedder.dimensions, int) and embedder.dimensions > 0
    for vector in embedder.embed(TEXTS):
        assert isinstance(vector, bytes) and len(vector) == 4 * embedder.dimensions


def test_vectors_are_unit_length(embedder):
    for vector in embedder.embed(TEXTS):
        assert math.sqrt(sum(x * x for x in floats(vector))) == pytest.approx(1.0, abs=1e-4)


def test_deterministic(embedder):
    assert embedder.embed(TEXTS) == embedder.embed(TEXTS)


def test_batch_equals_singles_in_order(embedder):
    batch = embedder.embed(TEXTS)
    singles = [embedder.embed([t])[0] for t in TEXTS]
    for a, b in zip(batch, singles, strict=True):
        assert floats(a) == pytest.approx(floats(b), abs=1e-5)
    reversed_batch = embedder.embed(list(reversed(TEXTS)))  # order is preserved
    for a, b in zip(reversed(reversed_batch), batch, strict=True):
        assert floats(a) == pytest.approx(floats(b), abs=1e-5)


def test_empty_string_is_embedded(embedder):
    [vector] = embedder.embed([""])
    assert len(vector) == 4 * embedder.dimensions
    assert math.sqrt(sum(x * x for x in floats(vector))) == pytest.approx(1.0, abs=1e-4)


def test_empty_batch(embedder):
    assert embedder.embed([]) == []


def test_related_texts_are_closer_than_unrelated(embedder):
    a, b, c = embedder.embed(["The user lives in Berlin.", "The user lives in Berlin now.",
                              "Quarterly revenue grew by eight percent."])
    dot = lambda x, y: sum(p * q for p, q in zip(floats(x), floats(y), strict=True))  # noqa: E731
    assert dot(a, b) > dot(a, c)


# -- token rows (ports/token_embedder.py) -----------------------------------------------------
def rows_of(blob: bytes, dims: int) -> list[list[float]]:
    values = floats(blob)
    assert len(values) % dims == 0
    return [values[i : i + dims] for i in range(0, len(values), dims)]


def test_token_rows_come_with_the_same_vectors(embedder):
    from tinycontext.ports.token_embedder import MAX_TOKEN_ROWS, TokenEmbedder

    assert isinstance(embedder, TokenEmbedder) and embedder.has_tokens
    for drop in (True, False):
        made = embedder.embed_with_tokens(TEXTS, drop)
        assert [v for v, _ in made] == embedder.embed(TEXTS)
        for _, blob in made:
            rows = rows_of(blob, embedder.dimensions)
            assert 1 <= len(rows) <= MAX_TOKEN_ROWS
            assert all(abs(math.sqrt(sum(x * x for x in r)) - 1.0) < 1e-4 for r in rows)


def test_stopwords_and_punctuation_are_dropped_from_memory_rows(embedder):
    dims = embedder.dimensions
    [(_, kept)] = embedder.embed_with_tokens(["The cat sat on the mat."], True)
    [(_, everything)] = embedder.embed_with_tokens(["The cat sat on the mat."], False)
    assert len(rows_of(kept, dims)) == 3  # cat, sat, mat
    assert len(rows_of(everything, dims)) == 6  # the, cat, sat, on, the, mat
    # Only stopwords: the first token stands in rather than nothing.
    [(_, fallback)] = embedder.embed_with_tokens(["the of and"], True)
    assert len(rows_of(fallback, dims)) == 1
