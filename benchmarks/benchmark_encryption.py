"""Encryption at rest: a plain store against a SQLCipher-encrypted one, back to back.

At each size a plain and an encrypted store are filled the same way (batched saves of 32,
the writes timed), then fresh processes in the order plain, encrypted, encrypted, plain open
each store, answer a first recall (cold start: process start to first answer) and time more
recalls (p50/p95). Each variant runs in its own process, as a user's would: one SQLite build
per process (sqlean or the stdlib for plain stores, SQLCipher for encrypted ones). The load
average is recorded beside every figure. `--model hash` (the default) keeps the embedding
out of the figures: it costs the same in both variants and would only hide the store's share.

    python benchmarks/benchmark_encryption.py --sizes 20000,100000 --json-out enc.json

With `--stores DIR` the filled stores are kept and reused: fill them under nice with
`--fill-only`, then time only the recalls (the reused fill's writes/s are reported as
measured then, marked "reused" in the JSON).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import (  # noqa: E402
    Progress,
    add_common_arguments,
    parse_sizes,
    print_table,
    throwaway_dir,
    warn_if_busy,
    write_json,
)
from benchmarks.metrics import percentile  # noqa: E402
from benchmarks.synthetic import memory_texts, questions, take  # noqa: E402

KEY = "6b" * 32  # a fixed benchmark key (64 hex characters), never a user's
TARGETS = {"recall_p95": 1.15, "writes": 0.85, "cold_start_s": 0.3}


def _service(db: str, model: str, encrypted: bool) -> Any:
    from tinycontext import TinyContextConfig, build_service

    config = TinyContextConfig(memory_db_path=db, encryption_key=KEY if encrypted else "",
                               models_dir=str(Path(db).parent / "models"))
    if model == "hash":
        from tinycontext.testing import HashEmbedder

        return build_service(config, embedder=HashEmbedder(384, "hash-384"))
    return build_service(config.model_copy(update={"embedding_model": model}))


def child_fill(db: str, model: str, encrypted: bool, size: int, batch: int) -> dict[str, Any]:
    service = _service(db, model, encrypted)
    texts = take(memory_texts(7), size)
    started = time.perf_counter()
    for first in range(0, size, batch):
        service.save([{"content": t} for t in texts[first:first + batch]])
    took = time.perf_counter() - started
    service.close()
    return {"writes_per_s": size / took, "fill_s": took}


def child_recall(db: str, model: str, encrypted: bool, queries: int) -> dict[str, Any]:
    started = float(os.environ["BENCH_SPAWNED"])
    service = _service(db, model, encrypted)
    asked = questions(queries + 1, 11)
    service.recall(asked[0])
    first = time.time() - started
    latencies = []
    for query in asked[1:]:
        t = time.perf_counter()
        service.recall(query)
        latencies.append((time.perf_counter() - t) * 1000)
    service.close()
    return {"first_answer_s": first, "p50_ms": percentile(latencies, 50),
            "p95_ms": percentile(latencies, 95)}


def _run_child(*args: str) -> dict[str, Any]:
    env = dict(os.environ, BENCH_SPAWNED=repr(time.time()))
    done = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True,
                          text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"benchmark child failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["load_1m"] = round(os.getloadavg()[0], 2)
    return result


def _fill(result: dict[str, Any], name: str, db: Path, size: int, args: argparse.Namespace,
          progress: Progress) -> None:
    """Fill one store, or reuse one a `--stores` folder already holds (its fill.json)."""
    done = db.parent / "fill.json"
    if done.exists():
        progress(f"{size:,}: the {name} store is already filled ({db.parent})")
        result[f"fill_{name}"] = {**json.loads(done.read_text()), "reused": True}
        return
    db.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    progress(f"{size:,}: filling the {name} store")
    result[f"fill_{name}"] = _run_child(
        "fill", str(db), args.model, name, str(size), str(args.batch_size))
    done.write_text(json.dumps(result[f"fill_{name}"]))


def _measure(size: int, folder: Path, args: argparse.Namespace,
             progress: Progress) -> dict[str, Any]:
    dbs = {"plain": folder / "plain" / "memories.db",
           "encrypted": folder / "encrypted" / "memories.db"}
    result: dict[str, Any] = {"size": size}
    for name, db in dbs.items():
        _fill(result, name, db, size, args, progress)
    if args.fill_only:
        return result
    for turn, name in enumerate(("plain", "encrypted", "encrypted", "plain")):
        progress(f"{size:,}: recall, {name} ({turn + 1}/4)")
        result[f"recall_{name}_{turn}"] = _run_child(
            "recall", str(dbs[name]), args.model, name, str(args.queries))
    return result


def run(args: argparse.Namespace, progress: Progress) -> list[dict[str, Any]]:
    rows = []
    for size in parse_sizes(args.sizes):
        if args.stores:
            kept = Path(args.stores) / str(size)
            kept.mkdir(mode=0o700, parents=True, exist_ok=True)
            rows.append(_measure(size, kept, args, progress))
            continue
        with throwaway_dir("encryption") as folder:
            rows.append(_measure(size, folder, args, progress))
    return rows


def _mean(result: dict[str, Any], name: str, key: str) -> float:
    values = [v[key] for k, v in result.items() if k.startswith(f"recall_{name}_")]
    return sum(values) / len(values)


def report(rows: list[dict[str, Any]]) -> None:
    table = []
    for r in rows:
        p95 = _mean(r, "encrypted", "p95_ms") / _mean(r, "plain", "p95_ms")
        writes = r["fill_encrypted"]["writes_per_s"] / r["fill_plain"]["writes_per_s"]
        cold = _mean(r, "encrypted", "first_answer_s") - _mean(r, "plain", "first_answer_s")
        loads = [v["load_1m"] for v in r.values() if isinstance(v, dict) and "load_1m" in v]
        table.append([
            f"{r['size']:,}",
            f"{_mean(r, 'plain', 'p50_ms'):.1f} / {_mean(r, 'encrypted', 'p50_ms'):.1f}",
            f"{_mean(r, 'plain', 'p95_ms'):.1f} / {_mean(r, 'encrypted', 'p95_ms'):.1f}",
            f"{p95:.2f}x (<= {TARGETS['recall_p95']})",
            f"{r['fill_plain']['writes_per_s']:.0f} / {r['fill_encrypted']['writes_per_s']:.0f}",
            f"{writes:.2f}x (>= {TARGETS['writes']})",
            f"{_mean(r, 'plain', 'first_answer_s'):.2f} / "
            f"{_mean(r, 'encrypted', 'first_answer_s'):.2f}",
            f"{cold:+.2f} s (<= +{TARGETS['cold_start_s']})",
            f"{min(loads):.1f}-{max(loads):.1f}",
        ])
    print_table(["memories", "recall p50 ms plain/enc", "recall p95 ms plain/enc", "p95 ratio",
                 "writes/s plain/enc", "writes ratio", "first answer s plain/enc",
                 "cold start", "load 1m"], table, "Encryption at rest (SQLCipher) vs plain")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--child":
        mode, db, model, variant, *rest = argv[1:]
        encrypted = variant == "encrypted"
        out = (child_fill(db, model, encrypted, int(rest[0]), int(rest[1])) if mode == "fill"
               else child_recall(db, model, encrypted, int(rest[0])))
        print(json.dumps(out))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="20000,100000", help="store sizes, comma-separated")
    parser.add_argument("--batch-size", type=int, default=32, help="memories per save call")
    parser.add_argument("--queries", type=int, default=100, help="recalls timed per process")
    parser.add_argument("--stores", metavar="DIR", help="keep the filled stores in DIR and "
                        "reuse them on the next run (fill them apart, under nice, with "
                        "--fill-only; then time only the recalls)")
    parser.add_argument("--fill-only", action="store_true",
                        help="fill the stores (needs --stores) and stop")
    add_common_arguments(parser)
    parser.set_defaults(model="hash")
    args = parser.parse_args(argv)
    if args.fill_only and not args.stores:
        parser.error("--fill-only keeps the stores for a later run: give --stores DIR")
    progress = Progress("encryption", args.quiet)
    warn_if_busy(progress)
    rows = run(args, progress)
    if args.fill_only:
        return 0
    report(rows)
    write_json(args.json_out, "encryption", args, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
