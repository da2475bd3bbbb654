"""Vector arithmetic of the service (numpy, loaded lazily): cosine, the context mix, token
sign bits and late-interaction (MaxSim) scores."""

from __future__ import annotations

import threading

from tinycontext import native
from tinycontext.domain.context import CONTEXT_TOKEN_WEIGHT, DENSE_CONTEXT_WEIGHT

# Model key suffixes: vectors that carry save-time context, memories that carry token bits
# (switching either on or off re-embeds, so every memory is alike).
CONTEXT_KEY = "+ctx1"
TOKENS_KEY = "+tok1"


def cosine(a: bytes, b: bytes) -> float:
    """Cosine of two unit float32 vectors (the embedder normalises them)."""
    np = native.numpy()

    return float(np.dot(np.frombuffer(a, dtype=np.float32), np.frombuffer(b, dtype=np.float32)))


def pairwise_cosines(vectors: list[bytes]) -> list[list[float]]:
    """Cosine of every pair of unit float32 vectors, as nested lists (row i: vector i)."""
    np = native.numpy()

    matrix = np.frombuffer(b"".join(vectors), dtype="<f4").reshape(len(vectors), -1)
    # einsum, not BLAS, for the reason given in maxsim below.
    products: list[list[float]] = np.einsum("id,jd->ij", matrix, matrix).tolist()
    return products


def context_key(weight: float) -> str:
    """The model key suffix of vectors that carry save-time context at `weight`."""
    return CONTEXT_KEY if weight == DENSE_CONTEXT_WEIGHT else f"+ctx@{weight:g}"


def mix_context(own: bytes, context: bytes, weight: float = DENSE_CONTEXT_WEIGHT) -> bytes:
    """normalise(own + weight x context): the stored vector of a memory with context (its
    own vector unchanged at weight 0)."""
    if weight == 0.0:
        return own
    np = native.numpy()

    mixed = np.frombuffer(own, dtype="<f4") + weight * np.frombuffer(context, dtype="<f4")
    norm = float(np.linalg.norm(mixed))
    if norm == 0.0:
        return own
    return bytes((mixed / norm).astype("<f4").tobytes())


def token_bits(rows: bytes, dimensions: int) -> bytes:
    """Sign bits of token rows (bit set for x > 0, least significant first), 1/8 byte each."""
    np = native.numpy()

    values = np.frombuffer(rows, dtype="<f4").reshape(-1, dimensions)
    return bytes(np.packbits(values > 0, axis=1, bitorder="little").tobytes())


def maxsim(
    query_rows: bytes, bits: dict[str, tuple[bytes, bytes | None]], dimensions: int
) -> dict[str, float]:
    """Late-interaction score per memory: for each query token the best match among the
    memory's token signs (or, at CONTEXT_TOKEN_WEIGHT, its context memory's), averaged over
    the query tokens; in cosine units (a sign vector has norm sqrt(dimensions))."""
    if not bits:
        return {}
    np = native.numpy()

    query = np.frombuffer(query_rows, dtype="<f4").reshape(-1, dimensions)
    ids = list(bits)
    with_context = [i for i in ids if bits[i][1]]
    blobs = [bits[i][0] for i in ids] + [bits[i][1] or b"" for i in with_context]
    width = dimensions // 8
    counts = np.array([len(b) // width for b in blobs])
    packed = np.frombuffer(b"".join(blobs), dtype=np.uint8).reshape(-1, width)
    # One product for every token of every memory. With b in {0, 1} for the bits,
    # q . (2b - 1) = 2 (q . b) - sum(q): the 0/1 matrix needs no sign pass of its own.
    ones = np.unpackbits(packed, axis=1, bitorder="little")[:, :dimensions]
    # einsum, not BLAS: OpenBLAS starts threads that spin against the model's on a busy
    # machine with few cores (the mirror's scan avoids BLAS for the same reason).
    products = np.einsum("nd,jd->nj", ones.astype(np.float32), query)
    products = (2.0 * products - query.sum(axis=1)) / np.sqrt(dimensions)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    best = np.maximum.reduceat(products, starts, axis=0)  # segments are never empty
    own = best[: len(ids)]
    if with_context:
        rows = [ids.index(i) for i in with_context]
        own[rows] = np.maximum(own[rows], CONTEXT_TOKEN_WEIGHT * best[len(ids) :])
    return {memory_id: float(value) for memory_id, value in zip(ids, own.mean(axis=1),
                                                                strict=True)}


class RecentVectors:
    """A small, thread-safe map of memory id -> own vector, oldest dropped first."""

    def __init__(self, size: int = 64) -> None:
        self._size = size
        self._items: dict[str, bytes] = {}
        self._lock = threading.Lock()

    def get(self, memory_id: str) -> bytes | None:
        with self._lock:
            return self._items.get(memory_id)

    def put(self, memory_id: str, vector: bytes) -> None:
        with self._lock:
            self._items[memory_id] = vector
            while len(self._items) > self._size:
                del self._items[next(iter(self._items))]
