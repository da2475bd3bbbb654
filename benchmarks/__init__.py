"""Benchmark scripts of SPEC section 11 and their shared helpers (never collected by pytest)."""
