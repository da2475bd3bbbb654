"""Moved to tinycontext/app/vectors.py (issue 14); this path keeps working."""

from tinycontext.app.vectors import (
    CONTEXT_KEY,
    TOKENS_KEY,
    RecentVectors,
    cosine,
    maxsim,
    mix_context,
    pairwise_cosines,
    token_bits,
)

__all__ = ["CONTEXT_KEY", "TOKENS_KEY", "RecentVectors", "cosine", "maxsim", "mix_context",
           "pairwise_cosines", "token_bits"]
