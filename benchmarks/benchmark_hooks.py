"""Agent hooks: what a prompt hook injects, and how long a hook takes (docs/guides/hooks.md).

Relevance (the hook's own selection: `tinycontext hook UserPromptSubmit` run as a
subprocess per prompt, what it injects read back): LoCoMo conversations 1-5 (the tuning
half) saved turn by turn into one store, as a person's memory would be; each QA question of
categories 1-4 replayed as a prompt against the whole store (no session scope), and each of
~100 ordinary coding prompts (benchmarks/coding_prompts.py) too, with the memory service
started at each relevance floor (hook_relevance_floor). For every relevance floor of
the grid: the share of questions whose injected block holds an evidence turn, the share of
prompts that get anything, mean tokens injected per prompt (the whole block, counted like
the budget), at the default hook_max_tokens. The coding targets: at most 10% of prompts get
anything, at most 20 tokens on average.

Speed (the real thing): a store of --size memories (LoCoMo turns, then realistic filler),
then `tinycontext hook UserPromptSubmit` run as a subprocess, the way Claude Code runs it:
cold (memory service stopped before each call) and warm (prompts in a row), wall time p50/p95.

    python benchmarks/benchmark_hooks.py --json-out hooks.json
    python benchmarks/benchmark_hooks.py --skip-speed --floors 0.3,0.4,0.5
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
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
    machine_info,
    machine_line,
    make_service,
    pct,
    print_table,
    settings,
    throwaway_dir,
    write_json,
)
from benchmarks.benchmark_locomo import DEFAULT_DATA, ingest  # noqa: E402
from benchmarks.coding_prompts import CODING_PROMPTS  # noqa: E402
from benchmarks.datasets import load_locomo  # noqa: E402
from benchmarks.metrics import mean, percentile  # noqa: E402
from benchmarks.realistic import RealisticText  # noqa: E402

FLOORS = "0.30,0.35,0.40,0.45,0.50,0.55,0.60"
REF = re.compile(r'ref="([0-9a-f]{12})"')  # a memory's ref in a recall block


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="locomo10.json")
    parser.add_argument("--conversations", type=int, default=5, help="LoCoMo conversations 1-N")
    parser.add_argument("--floors", default=FLOORS, help="relevance floors to compare")
    parser.add_argument("--size", type=int, default=20_000, help="memories in the speed store")
    parser.add_argument("--warm", type=int, default=200, help="warm hook calls")
    parser.add_argument("--cold", type=int, default=5, help="cold hook calls")
    parser.add_argument("--store", type=Path, help="keep/reuse the speed store in this folder")
    parser.add_argument("--skip-relevance", action="store_true")
    parser.add_argument("--skip-speed", action="store_true")
    add_common_arguments(parser)
    args = parser.parse_args(argv)
    if not args.data.is_file():
        parser.error(f"LoCoMo data not found at {args.data}; pass --data PATH")
    return args


def relevance(args: argparse.Namespace, progress: Progress) -> dict[str, Any]:
    floors = [float(f) for f in args.floors.split(",")]
    conversations = load_locomo(args.data)[: args.conversations]
    results: dict[str, Any] = {"floors": {}}
    with throwaway_dir("hooks") as folder:
        service = make_service(folder / "memories.db", args.model, **settings(args))
        budget, count = service.config.hook_max_tokens, service.tokenizer.count
        covers: dict[str, set[str]] = {}
        questions: list[tuple[str, tuple[str, ...]]] = []
        for conv in conversations:
            covers.update(ingest(service, conv, progress)["covers"])
            questions += [(qa.question, qa.evidence) for qa in conv.qas
                          if qa.evidence and qa.category in (1, 2, 3, 4)]
        service.close()
        by_ref = {memory_id.replace("-", "")[:12]: memory_id for memory_id in covers}
        progress(f"{len(covers):,} memories; replaying {len(questions):,} questions and "
                 f"{len(CODING_PROMPTS)} coding prompts through `tinycontext hook`")
        prompts = [("locomo", q, set(evidence)) for q, evidence in questions]
        prompts += [("coding", p, set()) for p in CODING_PROMPTS]
        for floor in floors:
            env = _environment(args, folder / "memories.db", folder,
                               hook_relevance_floor=floor, hook_capture="false")
            _ready(env)
            tally: dict[str, dict[str, Any]] = {
                name: {"prompts": 0, "injected": 0, "evidence": 0, "tokens": []}
                for name in ("locomo", "coding")}
            gave_up = 0
            try:
                for done, (name, prompt, gold) in enumerate(prompts, 1):
                    block, late = _prompt_hook(env, prompt, folder)
                    gave_up += late
                    chosen = {by_ref[ref] for ref in REF.findall(block) if ref in by_ref}
                    row = tally[name]
                    row["prompts"] += 1
                    row["tokens"].append(count(block) if block else 0)
                    row["injected"] += bool(chosen)
                    row["evidence"] += any(covers[memory_id] & gold for memory_id in chosen)
                    progress.tick(f"floor {floor:.2f}: {done:,}/{len(prompts):,} prompts")
            finally:
                _stopped(env)
            results["floors"][f"{floor:.2f}"] = {
                name: {"prompts": row["prompts"],
                       "injected_share": row["injected"] / max(row["prompts"], 1),
                       "mean_tokens": mean(row["tokens"]),
                       "evidence_share": row["evidence"] / max(row["prompts"], 1)}
                for name, row in tally.items()}
            results["floors"][f"{floor:.2f}"]["gave_up"] = gave_up
            progress(f"floor {floor:.2f} done" + (
                f" ({gave_up} hook calls ran out of time and injected nothing: a busy "
                "machine lowers these figures)" if gave_up else ""))
        results["budget"] = budget
        results["memories"] = len(covers)
    return results


def _environment(args: argparse.Namespace, db: Path, scratch: Path,
                 **config: Any) -> dict[str, str]:
    """The environment of a `tinycontext` subprocess on the store `db`: its own memory
    service (runtime folder in `scratch`), no config file, the run's model and settings."""
    run = scratch / "run"
    run.mkdir(mode=0o700, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TINYCONTEXT_")}
    env.update(TINYCONTEXT_MEMORY_DB_PATH=str(db), XDG_RUNTIME_DIR=str(run),
               TINYCONTEXT_CONFIG_FILE=str(scratch / "none.json"),
               TINYCONTEXT_MODELS_DIR=str(db.parent / "models"),
               **{f"TINYCONTEXT_{k.upper()}": str(v)
                  for k, v in {**settings(args), **config}.items()})
    if args.model != "hash":  # the fake has no setting: the service then runs the default
        env["TINYCONTEXT_EMBEDDING_MODEL"] = args.model
    return env


def _ready(env: dict[str, str]) -> float:
    """Seconds until the memory service answers (started by the first call if need be)."""
    started = time.perf_counter()
    while subprocess.run([str(Path(sys.executable).parent / "tinycontext"), "context",
                          "warm up"], env=env, capture_output=True, timeout=60).returncode:
        if time.perf_counter() - started > 120:
            raise SystemExit("the memory service gave no answer within 120 s")
    return time.perf_counter() - started


def _prompt_hook(env: dict[str, str], prompt: str, scratch: Path) -> tuple[str, bool]:
    """The block `tinycontext hook UserPromptSubmit` injects for a prompt (a session of its
    own, so nothing counts as given before), and whether the call gave up (a line in the
    hooks log: it ran out of time or the service failed)."""
    log = scratch / "run" / "tinycontext" / "hooks.log"
    before = log.read_text().count("\n") if log.exists() else 0
    command = [str(Path(sys.executable).parent / "tinycontext"), "hook", "UserPromptSubmit"]
    event = json.dumps({"session_id": f"bench-{random.random()}", "prompt": prompt,
                        "cwd": "/tmp/bench-project"})
    done = subprocess.run(command, input=event, env=env, capture_output=True, text=True,
                          timeout=60)
    late = (log.read_text().count("\n") if log.exists() else 0) > before
    if not done.stdout.strip():
        return "", late
    return json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"], late


def build_store(args: argparse.Namespace, folder: Path, progress: Progress) -> Path:
    db = folder / "memories.db"
    if db.exists():
        return db
    service = make_service(db, args.model, **settings(args))
    texts = [t.render(True) for c in load_locomo(args.data) for t in c.turns]
    filler = RealisticText(args.data).memory_texts()
    while len(texts) < args.size:
        texts.append(next(filler))
    for start in range(0, args.size, 64):
        service.save([{"content": t} for t in texts[start:start + 64]])
        progress.tick(f"speed store: {min(start + 64, args.size):,}/{args.size:,} saved")
    service.close()
    return db


def _hook(env: dict[str, str], prompt: str) -> tuple[float, bool]:
    command = [str(Path(sys.executable).parent / "tinycontext"), "hook", "UserPromptSubmit"]
    event = json.dumps({"session_id": f"bench-{random.random()}", "prompt": prompt,
                        "cwd": "/tmp/bench-project"})
    started = time.perf_counter()
    done = subprocess.run(command, input=event, env=env, capture_output=True, text=True,
                          timeout=60)
    return time.perf_counter() - started, bool(done.stdout.strip())


def _service(env: dict[str, str], action: str) -> int:
    return subprocess.run([str(Path(sys.executable).parent / "tinycontext"), "service", action],
                          env=env, capture_output=True, timeout=60).returncode


def _stopped(env: dict[str, str]) -> None:
    """Stop the service and wait until none answers (a cold call must find none running)."""
    deadline = time.monotonic() + 60
    while _service(env, "stop") == 0 and _service(env, "status") != 3:
        if time.monotonic() > deadline:
            raise SystemExit("the memory service did not stop within 60 s")
        time.sleep(0.2)


def speed(args: argparse.Namespace, progress: Progress) -> dict[str, Any]:
    with throwaway_dir("hooks-speed") as scratch:
        folder = args.store or scratch
        folder.mkdir(parents=True, exist_ok=True)
        db = build_store(args, folder, progress)
        env = _environment(args, db, scratch)
        log = scratch / "run" / "tinycontext" / "hooks.log"
        questions = RealisticText(args.data).questions(args.warm)
        cold, gave_up = [], 0
        for i in range(args.cold):
            _stopped(env)
            before = log.read_text().count("\n") if log.exists() else 0
            cold.append(_hook(env, questions[i])[0])
            gave_up += (log.read_text().count("\n") if log.exists() else 0) > before
            progress(f"cold call {i + 1}/{args.cold}: {cold[-1]:.2f} s")
        _stopped(env)
        ready = _ready(env)
        prompts = [p for pair in zip(questions, CODING_PROMPTS * 3, strict=False) for p in pair]
        warm, answered = [], 0
        for prompt in prompts[: args.warm]:
            seconds, gave = _hook(env, prompt)
            warm.append(seconds)
            answered += gave
            progress.tick(f"warm calls: {len(warm)}/{args.warm}")
        _service(env, "stop")
    ms = [1000 * s for s in warm]
    return {"memories": args.size, "warm_calls": len(warm), "warm_p50_ms": percentile(ms, 50),
            "warm_p95_ms": percentile(ms, 95), "warm_injected": answered,
            "cold_calls": len(cold), "cold_p50_ms": percentile([1000 * s for s in cold], 50),
            "cold_max_ms": 1000 * max(cold) if cold else None, "cold_gave_up": gave_up,
            "service_start_to_answer_ms": 1000 * ready}


def report(results: dict[str, Any]) -> None:
    if "relevance" in results:
        rel = results["relevance"]
        rows = [[floor, pct(r["locomo"]["evidence_share"]), pct(r["locomo"]["injected_share"]),
                 r["locomo"]["mean_tokens"], pct(r["coding"]["injected_share"]),
                 r["coding"]["mean_tokens"]] for floor, r in rel["floors"].items()]
        print_table(["floor", "LoCoMo: evidence in block %", "LoCoMo: anything %",
                     "LoCoMo: mean tokens", "coding: anything % (<= 10)",
                     "coding: mean tokens (<= 20)"], rows,
                    f"Prompt hook at hook_max_tokens={rel['budget']}, {rel['memories']:,} "
                    "memories (LoCoMo 1-5)")
    if "speed" in results:
        s = results["speed"]
        print_table(["store", "warm p50 ms", "warm p95 ms", "cold p50 ms", "cold max ms",
                     "cold calls that gave up", "service start to first answer ms"],
                    [[s["memories"], s["warm_p50_ms"], s["warm_p95_ms"], s["cold_p50_ms"],
                      s["cold_max_ms"], f"{s['cold_gave_up']}/{s['cold_calls']}",
                      s["service_start_to_answer_ms"]]],
                    "`tinycontext hook UserPromptSubmit` wall time (a subprocess per call)")
    print(machine_line(machine_info()))


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    progress = Progress("hooks", args.quiet)
    results: dict[str, Any] = {"load_average_start": os.getloadavg()}
    if not args.skip_relevance:
        results["relevance"] = relevance(args, progress)
    if not args.skip_speed:
        results["speed"] = speed(args, progress)
    results["load_average_end"] = os.getloadavg()
    report(results)
    write_json(args.json_out, "hooks", args, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
