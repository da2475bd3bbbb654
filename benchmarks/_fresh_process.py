"""What a fresh process costs: `import tinycontext` timed in new interpreters, and a new
process opening an existing store and answering recalls (its first answer, later latencies,
peak RSS). Shared by benchmark_speed.py and benchmark_million.py."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.metrics import percentile

# Runs in a fresh interpreter: what a user's first recall on an existing store costs.
COLD_START = r"""
import json, resource, sys, time
started = time.perf_counter()

def hwm_mb():
    # VmHWM belongs to this process image; ru_maxrss would also count the parent's peak,
    # which Linux carries into a forked child across exec.
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0

db, models, model, queries, recalls, overrides = sys.argv[1:7]
queries = json.loads(queries)
import tinycontext
from tinycontext import TinyContextConfig, build_service
imported = time.perf_counter()
config = TinyContextConfig(memory_db_path=db, models_dir=models,
                           embedding_model="balanced" if model == "hash" else model,
                           **json.loads(overrides))
if model == "hash":
    from tinycontext.testing import HashEmbedder
    service = build_service(config, embedder=HashEmbedder(384, "hash-384"))
else:
    service = build_service(config)
built = time.perf_counter()
first = service.recall(queries[0]).to_dict()
answered = time.perf_counter()
latencies = []
for i in range(int(recalls)):
    t = time.perf_counter()
    service.recall(queries[(i + 1) % len(queries)]).to_dict()
    latencies.append(time.perf_counter() - t)
print(json.dumps({
    "import_s": imported - started, "build_s": built - imported,
    "first_recall_s": answered - built, "to_first_answer_s": answered - started,
    "first_recall_returned": len(first["memories"]),
    "later_recall_latencies_s": latencies,
    "model_loads": getattr(service.embedder, "load_count", None),
    "peak_rss_mb": hwm_mb(),
}))
"""

IMPORT_PROBE = (
    "import time; t = time.perf_counter(); import {module}; "
    "print(time.perf_counter() - t)"
)



def import_times(runs: int) -> dict[str, dict[str, float]]:
    """Median and max seconds of `import X` in fresh interpreters."""
    out: dict[str, dict[str, float]] = {}
    for module in ("tinycontext", "tinycontext.entry.api"):
        samples = []
        for _ in range(runs):
            done = subprocess.run(
                [sys.executable, "-c", IMPORT_PROBE.format(module=module)],
                capture_output=True, text=True, check=True,
            )
            samples.append(float(done.stdout.strip()))
        out[module] = {"median_s": percentile(samples, 50), "max_s": max(samples)}
    return out


def cold_start(db: Path, model: str, queries: list[str], recalls: int,
               overrides: dict[str, Any]) -> dict[str, Any]:
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable, "-c", COLD_START, str(db), str(db.parent / "models"), model,
            json.dumps(queries), str(recalls), json.dumps(overrides),
        ],
        capture_output=True, text=True,
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"cold-start process failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["spawn_to_answer_s"] = wall  # includes interpreter start-up and exit
    lat = [s * 1000 for s in result.pop("later_recall_latencies_s")]
    if lat:
        result["later_recall_ms"] = {"p50": percentile(lat, 50), "p95": percentile(lat, 95)}
    return result
