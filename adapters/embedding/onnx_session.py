"""What running an ONNX embedding model needs besides the embedder: its ModelSpec, the
onnxruntime session, the tokenizer, the output to read, and how many threads to give it.

onnxruntime and tokenizers are imported on first use only (importing this module stays fast).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tinycontext import native

Pooling = Literal["mean", "cls", "none"]
"""How token states become one vector: masked mean, first token, or "none" (already pooled)."""

# intra_op_num_threads: on a quiet 2-core machine a second thread speeds up batches and
# short queries for both presets, but with other processes busy, spinning threads fell far
# behind and burnt much more CPU than one thread; with spinning off, 2 threads kept most of
# the gain at the CPU cost of one. Hence: at most 2 threads, never more than the cores, and
# no spin-waiting (a little slower per query on a quiet box, a core saved on a busy one).
DEFAULT_MAX_INTRA_OP_THREADS = 2


@dataclass(frozen=True)
class ModelSpec:
    """Everything needed to run one embedding model; built by `models.resolve_model`."""

    key: str
    model_path: Path
    tokenizer_path: Path
    dimensions: int
    max_tokens: int
    pooling: Pooling = "mean"
    output_name: str | None = None
    integer_matmuls: bool = False
    """Run the int8 weights as integer products (`onnx_int8`); the key must then name it."""
    cache_dir: Path | None = None
    """Where a rewritten model is kept between processes; None: rewrite in memory each load."""


def usable_cores() -> int:
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, cores or 1)


def default_intra_op_threads() -> int:
    """Threads for one inference: the measured best on small boxes, never more than the cores."""
    return min(DEFAULT_MAX_INTRA_OP_THREADS, usable_cores())


def load_tokenizer(path: Path, max_tokens: int) -> Any:
    """A `tokenizers.Tokenizer` that truncates at `max_tokens` and never pads."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(path))
    # Shipped tokenizer.json files often pad to a fixed 128 tokens: that triples the cost of
    # short texts. We pad per batch ourselves, to the longest text of the batch.
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=max_tokens)
    return tokenizer


def create_session(
    model: Path | bytes, intra_op_threads: int, *, cpu_mem_arena: bool = False
) -> Any:
    """An onnxruntime CPU session tuned for small embedding models (a file or its bytes)."""
    ort = native.onnxruntime()

    options = ort.SessionOptions()
    options.enable_cpu_mem_arena = cpu_mem_arena
    options.intra_op_num_threads = intra_op_threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3  # warnings about unused initialisers are noise for users
    source = model if isinstance(model, bytes) else str(model)
    return ort.InferenceSession(source, sess_options=options, providers=["CPUExecutionProvider"])


def pick_output(session: Any, pooling: Pooling) -> str | None:
    """The float output to read: rank 2 when the model pools itself, else token states (rank 3)."""
    want_rank = 2 if pooling == "none" else 3
    for output in session.get_outputs():
        # BERT's pooler_output is tanh(dense(CLS)), a classifier head, not a sentence embedding.
        float_output = output.type == "tensor(float)" and output.name != "pooler_output"
        if float_output and len(output.shape or ()) == want_rank:
            return str(output.name)
    return None
