"""Vector arithmetic of the service (numpy, loaded lazily): cosine, the context mix, token
sign bits and late-interaction (MaxSim) scores."""

from __future__ import annotations

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


def mix_context(own: bytes, context: bytes, weight: float = DENSE_CONTEXT_WEIGHT) -> bytes:
    """normalise(own + weight x context): the stored vector of a memory with context."""
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
    blobs = [bits[i][0] for i in ids] + [bits[i][1] or b"" for i in ids]
    width = dimensions // 8
    counts = [len(b) // width for b in blobs]
    packed = np.frombuffer(b"".join(blobs), dtype=np.uint8).reshape(-1, width)
    signs = np.unpackbits(packed, axis=1, bitorder="little")[:, :dimensions]
    # One product for every token of every memory: q . s with s in {-1, +1}.
    products = (query @ (signs.T.astype(np.float32) * 2.0 - 1.0)) / np.sqrt(dimensions)
    out: dict[str, float] = {}
    start = 0
    bests = []
    for count in counts:
        bests.append(products[:, start : start + count].max(axis=1) if count else None)
        start += count
    for n, memory_id in enumerate(ids):
        own, context = bests[n], bests[len(ids) + n]
        best = own if context is None else np.maximum(own, CONTEXT_TOKEN_WEIGHT * context)
        out[memory_id] = float(best.mean())
    return out
