"""How benchmark_million.py builds its store: texts, vectors (a few real, the rest noisy
combinations of two real ones), and the memories added as a save stores them, then the
index upkeep run to completion (see that module's docstring)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

from benchmarks._common import Progress, make_service, settings

BUILD_BATCH = 5000


def combined_vectors(real: Any, count: int, noise: float, seed: int) -> Any:
    """`count` vectors: the real ones first, then noisy mixes of two real ones."""
    import numpy as np

    rng = np.random.default_rng(seed)
    out = np.empty((count, real.shape[1]), dtype=np.float32)
    out[: len(real)] = real
    for start in range(len(real), count, 100_000):
        n = min(100_000, count - start)
        a, b = rng.integers(0, len(real), n), rng.integers(0, len(real), n)
        w = rng.uniform(0.5, 0.9, n).astype(np.float32)[:, None]
        mix = w * real[a] + (1 - w) * real[b]
        mix += rng.standard_normal(mix.shape, dtype=np.float32) * (noise / np.sqrt(mix.shape[1]))
        out[start : start + n] = mix / np.linalg.norm(mix, axis=1, keepdims=True)
    return out


def row_of(memory_id: str) -> int:
    """Matrix row of a bulk memory (its id is `bulk_id(row)`)."""
    from tinycontext.testing.bulk import bulk_number

    return bulk_number(memory_id)


def stored_items(texts: list[str], vectors: Any, tokens: list[bytes | None], first: int,
                 key: str, tokenizer: Any) -> list[Any]:
    """Memories as a save would store them: id from the row, a minute apart, token bits."""
    from tinycontext.testing.bulk import bulk_id, prepared

    out = []
    for offset, (text, vector, bits) in enumerate(zip(texts, vectors, tokens, strict=True)):
        n = first + offset
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1_600_000_000 + n * 60))
        out.append(prepared(bulk_id(n), text, created_at=stamp,
                            vector=vector.astype("<f4").tobytes(), model_key=key,
                            content_tokens=tokenizer.count(text), token_bits=bits))
    return out


def real_documents(args: argparse.Namespace, folder: Path, embedder: Any, texts: Any,
                   progress: Progress) -> tuple[str, Any, list[str], list[Any]]:
    """(model key, tokenizer, the first --real-texts texts, their (vector, token bits)).

    A throwaway service says how a save embeds: its model key (with the context and token
    suffixes, so nothing is re-embedded later) and the token sign bits it stores."""
    service = make_service(folder / "key.db", args.model, embedder=embedder, **settings(args))
    key, tokenizer = service.model_key, service.tokenizer
    first = [next(texts) for _ in range(args.real_texts)]
    made: list[Any] = []
    for start in range(0, len(first), 64):
        made += service.embed_documents(first[start : start + 64])
        progress.tick(f"embedded {len(made):,}/{len(first):,} real texts")
    service.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{folder / 'key.db'}{suffix}").unlink(missing_ok=True)
    return key, tokenizer, first, made


def load_pristine(args: argparse.Namespace, embedder: Any, batches: Any, key: str,
                  progress: Progress, label: str) -> Any:
    """The batches bulk-loaded into --store-dir's pristine.db through the store of a service
    over it (no background upkeep: the load runs it to completion itself)."""
    from tinycontext.testing.bulk import bulk_load

    service = make_service(args.store_dir / "pristine.db", args.model, embedder=embedder,
                           background=False, **settings(args))
    try:
        return bulk_load(service.store, batches, key,
                         lambda line: progress.tick(f"{label}: {line}"))
    finally:
        service.close()


def build(args: argparse.Namespace, progress: Progress, embedder: Any, texts: Any) -> None:
    import numpy as np

    folder = args.store_dir
    free = shutil.disk_usage(folder).free
    need = args.size * 6000  # ~4.5 KB of store (with token bits) and 1.5 KB of vectors
    if free < 2 * need:
        raise SystemExit(f"{free / 2**30:.1f} GB free in {folder}: need about "
                         f"{2 * need / 2**30:.1f} GB (the store, its vectors and a copy)")
    progress(f"building {args.size:,} memories in {folder} ({need / 2**30:.1f} GB)")
    key, tokenizer, first, made = real_documents(args, folder, embedder, texts, progress)
    real = np.stack([np.frombuffer(v, "<f4") for v, _ in made])
    matrix = combined_vectors(real, args.size, args.noise, args.seed)
    np.save(folder / "vectors.npy", matrix)
    # A combination borrows the token bits of its first source text (the late-interaction
    # rescoring then reads as many bytes as for a real memory).
    rng = np.random.default_rng(args.seed + 1)

    def batches() -> Any:
        for done in range(0, args.size, BUILD_BATCH):
            n = min(BUILD_BATCH, args.size - done)
            chunk = [first[i] if i < len(first) else next(texts) for i in range(done, done + n)]
            bits = [made[i if i < len(first) else int(rng.integers(len(first)))][1]
                    for i in range(done, done + n)]
            yield stored_items(chunk, matrix[done : done + n], bits, done, key, tokenizer)

    loaded = load_pristine(args, embedder, batches(), key, progress, f"{args.size:,} memories")
    (folder / "build.json").write_text(json.dumps({
        "size": args.size, "real_texts": args.real_texts, "noise": args.noise,
        "seed": args.seed, "model_key": key, "load_s": loaded.load_s,
        "upkeep_s": loaded.upkeep_s, "upkeep_steps": loaded.upkeep_steps,
    }), encoding="utf-8")
    os.chmod(folder / "build.json", 0o600)
