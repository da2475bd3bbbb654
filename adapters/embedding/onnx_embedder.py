"""Embedder adapter: a sentence-embedding ONNX model run with onnxruntime and `tokenizers`.

onnxruntime, tokenizers and numpy are imported on first use only, so importing this module (and
`tinycontext`) stays fast; the session and tokenizer load lazily, once per instance. The spec,
session, tokenizer and thread choices are in onnx_session.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tinycontext import native
from tinycontext.ports.embedder import Vector
from tinycontext.ports.token_embedder import TokenEmbedder, TokenRows

from .onnx_session import (
    ModelSpec,
    create_session,
    default_intra_op_threads,
    load_tokenizer,
    pick_output,
    usable_cores,
)
from .onnx_tokens import content_token_rows

__all__ = [
    "DEFAULT_MAX_PARALLEL_RUNS", "MAX_BATCH_TOKENS", "MAX_PADDING_TOKENS", "OnnxEmbedder",
    "plan_runs"
]

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from numpy import float32

# The integer rewrite of balanced (onnx_int8) runs many small operators, where waking a second
# thread per operator costs more than it saves: one thread answers a short query faster, and
# two single-threaded runs at once (a batch split in two) embed more texts per second than
# one two-threaded run. So integer models run one thread per inference and a batch on up to
# two runs at once; a query also leaves the second core to the keyword search that recall
# runs beside it. (float32 models gained little on batches from two runs at once and lost
# on queries.)
DEFAULT_MAX_PARALLEL_RUNS = 2
# Tokens in one model run. A run's activations must stay in the CPU caches: runs of this
# size embedded short, medium and long texts markedly faster than one run per batch, and
# much smaller runs lose again. It also bounds memory: attention grows with rows x width^2,
# so a large batch in one run can take gigabytes. The batch a caller passes is still
# embedded in one call.
MAX_BATCH_TOKENS = 384
# Padded tokens one run may carry. Every padded position costs as much as a real token, and
# a run's fixed cost is about that of 6-8 tokens (MiniLM int8, one thread): a text that
# would pad the run by more starts a new one.
# The vectors do not depend on how texts are grouped (the attention mask zeroes padding; a
# test compares bytes), only the work does: when a run took every text that fitted
# MAX_BATCH_TOKENS, small saves computed markedly more positions than they had tokens; with
# this cap only a few per cent more.
MAX_PADDING_TOKENS = 8


def plan_runs(lengths: Sequence[int], batch_size: int) -> list[tuple[int, int]]:
    """[start, end) slices of `lengths` (sorted ascending) that run together: at most
    `batch_size` texts and MAX_BATCH_TOKENS padded tokens a run (a longer text runs alone),
    and at most MAX_PADDING_TOKENS of padding."""
    runs: list[tuple[int, int]] = []
    start, total = 0, 0  # total: real tokens of the run so far
    for index, length in enumerate(lengths):
        rows = index - start
        width = max(length, 1)
        if rows and (
            rows >= batch_size or (rows + 1) * width > MAX_BATCH_TOKENS
            or (rows + 1) * width - (total + length) > MAX_PADDING_TOKENS
        ):
            runs.append((start, index))
            start, total = index, 0
        total += length
    if start < len(lengths):
        runs.append((start, len(lengths)))
    return runs


class OnnxEmbedder(TokenEmbedder):
    """Embeds texts with an ONNX sentence-embedding model; vectors are L2-normalised float32."""

    def __init__(
        self,
        spec: ModelSpec,
        batch_size: int = 32,
        intra_op_threads: int | None = None,
        *,
        cpu_mem_arena: bool = False,
        parallel_runs: int | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        if spec.pooling not in ("mean", "cls", "none"):
            raise ValueError(f"unknown pooling {spec.pooling!r}")
        self._spec = spec
        self._batch_size = batch_size
        if spec.integer_matmuls:  # measured above: one thread per run, runs side by side
            threads, runs = 1, min(DEFAULT_MAX_PARALLEL_RUNS, usable_cores())
        else:
            threads, runs = default_intra_op_threads(), 1
        self._intra_op_threads = intra_op_threads or threads
        self._parallel_runs = max(1, parallel_runs or runs)
        self._helpers: ThreadPoolExecutor | None = None
        # The arena keeps the peak of the largest batch ever seen; off by default (see SPEC 4).
        self._cpu_mem_arena = cpu_mem_arena
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._input_names: frozenset[str] = frozenset()
        self._output_name = ""
        self._run_options: Any = None
        self.load_count = 0
        """How many times the session was created (1 after the first embed, then stays 1)."""

    @property
    def model_key(self) -> str:
        return self._spec.key

    @property
    def dimensions(self) -> int:
        return self._spec.dimensions

    @property
    def spec(self) -> ModelSpec:
        return self._spec

    @property
    def tokenizer(self) -> Any:
        """The loaded `tokenizers.Tokenizer` (loads the model if needed)."""
        self._ensure_loaded()
        return self._tokenizer

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        return [vector for vector, _ in self._embed(texts, None)]

    @property
    def has_tokens(self) -> bool:
        return self._spec.pooling != "none"

    def embed_with_tokens(
        self, texts: Sequence[str], drop_stopwords: bool
    ) -> list[tuple[Vector, TokenRows]]:
        if not self.has_tokens:
            raise ValueError(f"model {self._spec.key} pools inside: it has no token states")
        return self._embed(texts, drop_stopwords)

    def _embed(
        self, texts: Sequence[str], drop_stopwords: bool | None
    ) -> list[tuple[Vector, TokenRows]]:
        """Vectors (and, unless drop_stopwords is None, content token rows) per text."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single string")
        if not texts:
            return []
        self._ensure_loaded()
        np = native.numpy()

        encodings = self._tokenizer.encode_batch(list(texts))
        lengths = [len(e.ids) for e in encodings]
        # Shortest first so each batch pads to a similar length; the order is restored below.
        order = sorted(range(len(texts)), key=lengths.__getitem__)
        out = np.empty((len(texts), self._spec.dimensions), dtype=np.float32)
        tokens: list[TokenRows] = [b""] * len(texts)
        want = None if drop_stopwords is None else (tokens, drop_stopwords)
        # Dealt out in turn, each share holds texts of every length: the runs finish together.
        shares = [order[i :: self._parallel_runs] for i in range(self._parallel_runs)]
        shares = [share for share in shares if share]
        others = [self._helper_pool().submit(self._embed_share, share, encodings, lengths, out,
                                             want)
                  for share in shares[1:]]
        try:
            self._embed_share(shares[0], encodings, lengths, out, want)
        finally:
            for other in others:  # every run has finished (or failed) before out is read
                other.result()
        little_endian = out.astype("<f4", copy=False)
        return [(row.tobytes(), rows) for row, rows in zip(little_endian, tokens, strict=True)]

    def _embed_share(
        self, order: list[int], encodings: list[Any], lengths: list[int], out: Any,
        want: tuple[list[TokenRows], bool] | None = None,
    ) -> None:
        """Embeds texts `order` (sorted by length) into their rows of `out`, run by run."""
        for start, end in plan_runs([lengths[i] for i in order], self._batch_size):
            chunk = order[start:end]
            pooled, states = self._run([encodings[i] for i in chunk])
            out[chunk] = pooled
            if want is not None:
                for row, i in enumerate(chunk):
                    want[0][i] = content_token_rows(
                        states[row, : lengths[i]], encodings[i].tokens, want[1]
                    )

    def _helper_pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._helpers is None:
                self._helpers = ThreadPoolExecutor(
                    max_workers=self._parallel_runs - 1, thread_name_prefix="tinycontext-embed"
                )
            return self._helpers

    def _run(self, encodings: list[Any]) -> tuple[npt.NDArray[np.float32], Any]:
        """Pooled unit vectors and the raw token states of one run."""
        np = native.numpy()

        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, enc in enumerate(encodings):
            ids[row, : len(enc.ids)] = enc.ids
            mask[row, : len(enc.ids)] = 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        feed = {name: value for name, value in feed.items() if name in self._input_names}
        (states,) = self._session.run([self._output_name], feed, self._run_options)
        states = np.asarray(states, dtype=np.float32)
        if self._spec.pooling == "none":
            pooled = states
        elif self._spec.pooling == "cls":
            pooled = states[:, 0, :]
        else:
            weights = mask[:, :, None].astype(np.float32)
            summed = (states * weights).sum(axis=1)
            pooled = summed / np.maximum(weights.sum(axis=1), 1.0)
        if pooled.shape[1] != self._spec.dimensions:
            raise RuntimeError(
                f"model {self._spec.key} returned {pooled.shape[1]} dimensions, "
                f"expected {self._spec.dimensions}"
            )
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        result: npt.NDArray[float32] = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return result, states

    def _create_session(self) -> Any:
        spec = self._spec

        def open_session(model: Path | bytes) -> Any:
            return create_session(model, self._intra_op_threads, cpu_mem_arena=self._cpu_mem_arena)

        if not spec.integer_matmuls:
            return open_session(spec.model_path)
        from . import onnx_int8

        tag = spec.key.rpartition(":")[2]
        model = onnx_int8.prepare(spec.model_path, spec.cache_dir, tag)
        try:
            return open_session(model)
        except Exception:
            if isinstance(model, bytes):
                raise
            # A damaged cache file (cut short, edited): drop it and rewrite once.
            onnx_int8.discard(model)
            return open_session(onnx_int8.prepare(spec.model_path, spec.cache_dir, tag))

    def _ensure_loaded(self) -> None:
        if self._session is not None:
            return
        with self._lock:
            if self._session is not None:
                return
            tokenizer = load_tokenizer(self._spec.tokenizer_path, self._spec.max_tokens)
            session = self._create_session()
            self._input_names = frozenset(i.name for i in session.get_inputs())
            output_name = self._spec.output_name or pick_output(session, self._spec.pooling)
            if output_name is None:
                raise RuntimeError(f"model {self._spec.key} has no usable float output")
            self._output_name = output_name
            if self._cpu_mem_arena:
                # With the arena on, free its unused chunks after every run so the peak of a
                # large batch is not kept (measured: 1.5 GB kept vs 0.27 GB shrunk, 32 x 256 tok).
                ort = native.onnxruntime()

                self._run_options = ort.RunOptions()
                self._run_options.add_run_config_entry(
                    "memory.enable_memory_arena_shrinkage", "cpu:0"
                )
            self._tokenizer = tokenizer
            self.load_count += 1
            self._session = session  # published last: other threads test it without the lock
