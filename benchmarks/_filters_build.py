"""How benchmark_filters.py builds its store: memories a minute apart with two tags (one on
1% of them, one on 50%), and for 30% of them 1-5 older versions spread over the history
before them, each replaced when the next was made. Vectors as benchmark_million makes them
(a few real, the rest noisy mixes of two real ones)."""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

from benchmarks._common import Progress
from benchmarks._million_build import combined_vectors, load_pristine, real_documents

BATCH = 5000
MINUTE = 60
BASE = 1_600_000_000
RARE, HALF = "rare", "half"  # the 1% and 50% tags
NEVER = 2**62  # the supersede time of a current version


def stamp(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def plan(size: int, share: float, seed: int) -> dict[str, Any]:
    """Per stored row: its memory number, created and replaced times (seconds), and whether
    it is the current version. Row order is insertion order (each chain oldest first)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    numbers, created, replaced = [], [], []
    for n in range(size):
        now = BASE + n * MINUTE
        times: list[int] = []
        if n > 10 and rng.random() < share:
            k = int(rng.integers(1, 6))
            times = sorted(int(t) for t in rng.choice(n, size=min(k, n), replace=False))
            times = [BASE + t * MINUTE + 30 for t in times]  # half a minute off the grid
        times.append(now)
        for j, t in enumerate(times):
            numbers.append(n)
            created.append(t)
            replaced.append(times[j + 1] if j + 1 < len(times) else NEVER)
    return {"number": np.array(numbers), "created": np.array(created, dtype=np.int64),
            "replaced": np.array(replaced, dtype=np.int64)}


def tags_of(n: int) -> tuple[str, ...]:
    tags = (RARE,) if n % 100 == 0 else ()
    return (*tags, HALF) if n % 2 == 1 else tags


def build(args: argparse.Namespace, progress: Progress, embedder: Any, texts: Any) -> None:
    import numpy as np

    from tinycontext.testing.bulk import bulk_id, prepared

    folder = args.store_dir
    rows = plan(args.size, args.versioned, args.seed)
    total = len(rows["number"])
    progress(f"building {args.size:,} memories with {total - args.size:,} older versions")
    key, tokenizer, first, made = real_documents(args, folder, embedder, texts, progress)
    real = np.stack([np.frombuffer(v, "<f4") for v, _ in made])
    matrix = combined_vectors(real, total, args.noise, args.seed)
    np.save(folder / "vectors.npy", matrix)
    np.savez(folder / "rows.npz", **rows)
    for old in folder.glob("pristine.db*"):  # an earlier build of other parameters
        old.unlink()
    ids = [bulk_id(i) for i in range(total)]

    def batches() -> Any:
        for start in range(0, total, BATCH):
            items = []
            for i in range(start, min(total, start + BATCH)):
                n = int(rows["number"][i])
                text = first[i] if i < len(first) else next(texts)
                later = int(rows["replaced"][i]) != NEVER
                earlier = i > 0 and int(rows["number"][i - 1]) == n
                items.append(prepared(
                    ids[i], text, created_at=stamp(int(rows["created"][i])),
                    vector=matrix[i].astype("<f4").tobytes(), model_key=key,
                    content_tokens=tokenizer.count(text), token_bits=made[i % len(made)][1],
                    tags=tags_of(n), supersedes=ids[i - 1] if earlier else None,
                    superseded_by=ids[i + 1] if later else None,
                    superseded_at=stamp(int(rows["replaced"][i])) if later else None,
                ))
            yield items

    load_s = load_pristine(args, embedder, batches(), key, progress, f"{total:,} rows").load_s
    (folder / "build.json").write_text(json.dumps({
        "size": args.size, "rows": total, "versioned": args.versioned,
        "real_texts": args.real_texts, "noise": args.noise, "seed": args.seed,
        "model_key": key, "load_s": load_s,
    }), encoding="utf-8")
    os.chmod(folder / "build.json", 0o600)


def live_rows(rows: dict[str, Any], moment: int | None) -> Any:
    """Boolean mask of the rows live now (None) or live at `moment` (seconds)."""
    if moment is None:
        return rows["replaced"] == NEVER
    return (rows["created"] <= moment) & (rows["replaced"] > moment)


def tag_rows(rows: dict[str, Any], tag: str) -> Any:
    import numpy as np

    numbers = rows["number"]
    if tag == RARE:
        return numbers % 100 == 0
    if tag == HALF:
        return numbers % 2 == 1
    return np.ones(len(numbers), dtype=bool)


def path_of(folder: Path, name: str) -> Path:
    return folder / name
