"""The mirror's numpy kernels: Hamming distances of sign bits, the smallest of them, and the
int8 re-rank of the survivors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tinycontext import native


def word_bytes(bits: bytes) -> bytes:
    """Sign bits zero-padded to whole 64-bit words (identically for stored and query bits)."""
    spare = len(bits) % 8
    return bits + b"\0" * (8 - spare) if spare else bits


def hamming(columns: Any, bits: Sequence[bytes]) -> Any:
    """Hamming distances of each query's sign bits to every column: (queries, columns)."""
    np = native.numpy()

    words = np.stack([np.frombuffer(word_bytes(b), dtype=np.uint64) for b in bits])
    distances = np.bitwise_count(columns[0][None, :] ^ words[:, 0:1]).astype(np.uint16)
    for i in range(1, words.shape[1]):
        distances += np.bitwise_count(columns[i][None, :] ^ words[:, i : i + 1])
    return distances


def hamming_each(columns: Any, bits: Sequence[bytes], owner: Any) -> Any:
    """Hamming distance of each column to the sign bits of the query that owns it
    (`owner[i]` indexes `bits`): one pass for several queries' own columns."""
    np = native.numpy()

    words = np.stack([np.frombuffer(word_bytes(b), dtype=np.uint64) for b in bits])[owner]
    distances = np.bitwise_count(columns[0] ^ words[:, 0]).astype(np.uint16)
    for i in range(1, words.shape[1]):
        distances += np.bitwise_count(columns[i] ^ words[:, i])
    return distances


def smallest(distances: Any, count: int, seqs: Any) -> Any:
    """Indexes of the `count` smallest small-integer distances, ties at the cut broken by
    seq (so the choice does not depend on slot order). A counting pass finds the threshold:
    cheaper than argpartition over 100,000 values."""
    np = native.numpy()

    totals = np.cumsum(np.bincount(distances))
    threshold = int(np.searchsorted(totals, count))
    below = np.flatnonzero(distances < threshold)
    tied = np.flatnonzero(distances == threshold)
    need = count - len(below)
    if len(tied) > need:
        tied = tied[np.argsort(seqs[tied], kind="stable")[:need]]
    return np.concatenate([below, tied])


def rescore(view: Any, slots: Any, query: bytes, limit: int) -> list[int]:
    """Seqs of the `limit` slots whose int8 codes score highest against `query` (a View's
    slots; ties: lower seq first)."""
    np = native.numpy()

    seqs = view.seqs[slots]
    if len(slots) > limit:
        # einsum, not `@`: a BLAS matrix-vector product starts OpenBLAS threads that then
        # spin against the model's and burn CPU on a busy machine.
        scores = np.einsum(
            "ij,j->i", view.codes[slots].astype(np.float32), np.frombuffer(query, np.float32))
        seqs = seqs[np.lexsort((seqs, -scores))[:limit]]
    return [int(s) for s in seqs]
