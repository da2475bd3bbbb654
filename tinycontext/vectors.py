"""Vector arithmetic of the service (numpy, loaded lazily): cosine and the context mix."""

from __future__ import annotations

from tinycontext import native
from tinycontext.domain.context import DENSE_CONTEXT_WEIGHT

# Model key suffix of vectors that carry save-time context (a change of the mix re-embeds).
CONTEXT_KEY = "+ctx1"


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
