"""Cost of secret redaction on the save path: microseconds and memory per memory text.

Every save and update runs its content through the secret scanner, asked alone here through
`tinycontext.testing.secrets.redact_secrets`. This times it on 10,000 texts of four kinds:
conversational memories (LoCoMo's vocabulary, see realistic.py; `--text synthetic` for the
templated facts), the same with a word that names a secret ("password", "token", "key" ...)
but no secret, the same with a made-up secret of a random kind inserted, technical notes
(paths, hashes, UUIDs, versions, URLs) and numbers in prose (phone, order, tracking and
account numbers, amounts, dates, IPs, ISBNs).

    python benchmarks/benchmark_secrets.py [--count 10000] [--repeats 5] [--json-out PATH]
"""

from __future__ import annotations

import argparse
import random
import string
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import (  # noqa: E402
    Progress,
    add_common_arguments,
    print_table,
    warn_if_busy,
    write_json,
)
from benchmarks.synthetic import memory_texts  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "locomo10.json"
ALNUM = string.ascii_letters + string.digits
WORDED = [
    "I forgot my password again", "the deploy token expires on Friday",
    "rotate the Stripe secret key every 90 days", "the API key lives in the vault",
    "password: see the team vault", "max_tokens=2000 for this agent",
]
TECHNICAL = [
    "commit {hex40} fixed the flaky test in /home/bob/src/app/tests/test_sync.py",
    "sha256 {hex64} of release v2.14.3-rc.1 (build 20240611)",
    "memory {uuid} superseded; see https://github.com/org/repo/pull/4821 for context",
    "base64 of the config is eyJuYW1lIjogImJvYiIsICJhZ2UiOiA0Mn0= and it decodes fine",
    "ran python3.11 -m pytest -q tests/unit -k secrets --maxfail=1 on claude-3-5-sonnet-20241022",
]

NUMBERS = [  # numbers ordinary memories hold: none is a card or an id number
    "Call me on +1 415 555 {d4} after six, or on 0151 496 {d4}",
    "order #{d16} shipped on 2024-{mm}-{dd}; tracking {d22}",
    "the invoice total was ${d4}.{d2} and the deposit {d3},{d3}.00",
    "meet at {hh}:{mm} in room {d3}-{d2}, badge {d6}",
    "IP 10.{d2}.{d2}.{d2} runs version {d1}.{d2}.{d3} (build {d8})",
    "ISBN 978-{d1}-{d2}-{d6}-{d1}; account {d8}, sort code {d2}-{d2}-{d2}",
    "epoch {d13} ms; the job id is {d16} and the run {d4}-{d4}-{d4}",
]


def _numbers(rng: random.Random, i: int) -> str:
    def digits(n: int) -> str:
        return "".join(rng.choice(string.digits) for _ in range(n))

    fields = {f"d{n}": digits(n) for n in (1, 2, 3, 4, 6, 8, 13, 16, 22)}
    fields.update(mm=f"{rng.randint(1, 12):02d}", dd=f"{rng.randint(1, 28):02d}",
                  hh=f"{rng.randint(0, 23):02d}")
    return NUMBERS[i % len(NUMBERS)].format(**fields)


def _secrets(rng: random.Random) -> list[str]:
    """One made-up credential of each kind the detector knows, in a short sentence."""
    def pick(n: int, alphabet: str = ALNUM) -> str:
        return "".join(rng.choice(alphabet) for _ in range(n))

    return [
        f"CI pushes with ghp_{pick(36)}",
        f"GitLab token glpat-{pick(20)} for the runner",
        f"Stripe key sk_live_{pick(24)}",
        f"OPENAI_API_KEY=sk-proj-{pick(64)}",
        f"AWS key AKIA{pick(16, string.ascii_uppercase + '234567')} secret {pick(40)}",
        f"db at postgresql://app:{pick(12)}@db.internal/app",
        f"password={pick(10)}",
        f"my api key is {pick(24)}",
    ]


def _sets(args: argparse.Namespace) -> dict[str, list[str]]:
    rng = random.Random(args.seed)
    if args.text == "realistic":
        from benchmarks.realistic import RealisticText

        stream = RealisticText(args.data).memory_texts(args.seed)
    else:
        stream = memory_texts(args.seed)
    plain = [next(stream) for _ in range(args.count)]
    hexes = "0123456789abcdef"

    def technical(i: int) -> str:
        return TECHNICAL[i % len(TECHNICAL)].format(
            hex40="".join(rng.choice(hexes) for _ in range(40)),
            hex64="".join(rng.choice(hexes) for _ in range(64)),
            uuid="-".join("".join(rng.choice(hexes) for _ in range(n)) for n in (8, 4, 4, 4, 12)),
        )

    return {
        "conversational": plain,
        "with a secret word, no secret": [f"{t} ({WORDED[i % len(WORDED)]})"
                                          for i, t in enumerate(plain)],
        "with one secret": [f"{t} {rng.choice(_secrets(rng))}" for t in plain],
        "technical notes": [technical(i) for i in range(args.count)],
        "numbers in prose": [_numbers(rng, i) for i in range(args.count)],
    }


def _measure(texts: list[str], redact: Callable[[str], Any], repeats: int) -> dict[str, Any]:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for text in texts:
            redact(text)
        best = min(best, time.perf_counter() - start)
    singles = []
    found = 0
    for text in texts:
        start = time.perf_counter_ns()
        result = redact(text)
        singles.append(time.perf_counter_ns() - start)
        found += len(result.kinds)
    singles.sort()
    tracemalloc.start()
    for text in texts:
        redact(text)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "texts": len(texts), "mean_chars": sum(map(len, texts)) / len(texts),
        "us_per_text": best / len(texts) * 1e6,
        "p99_us": singles[int(0.99 * (len(singles) - 1))] / 1000,
        "max_us": singles[-1] / 1000, "secrets_found": found, "peak_kb": peak / 1024,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000, help="texts per kind")
    parser.add_argument("--repeats", type=int, default=5, help="timed passes (best counts)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--text", choices=("realistic", "synthetic"), default="realistic")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA,
                        help=f"LoCoMo file for --text realistic (default {DEFAULT_DATA})")
    add_common_arguments(parser)
    args = parser.parse_args(argv)
    if args.text == "realistic" and not args.data.is_file():
        parser.error(f"LoCoMo data not found at {args.data}: pass --data PATH or --text "
                     "synthetic")
    progress = Progress("secrets", args.quiet)
    warn_if_busy(progress)
    import tinycontext.testing  # noqa: F401 - the package's fakes are not the detector's cost

    tracemalloc.start()
    from tinycontext.testing.secrets import redact_secrets as redact

    compiled_kb = tracemalloc.get_traced_memory()[1] / 1024
    tracemalloc.stop()
    results: dict[str, Any] = {"module_import_peak_kb": compiled_kb}
    rows = []
    for name, texts in _sets(args).items():
        progress(f"{name}: {len(texts)} texts")
        measured = _measure(texts, redact, args.repeats)
        results[name] = measured
        rows.append([name, measured["texts"], measured["mean_chars"], measured["us_per_text"],
                     measured["p99_us"], measured["max_us"], measured["secrets_found"],
                     measured["peak_kb"]])
    print_table(["texts", "count", "mean chars", "us/text", "p99 us", "max us", "secrets found",
                 "peak KB"], rows, "Secret redaction (best of the timed passes)")
    print(f"\nImporting the detector (compiling its patterns) took {compiled_kb:.0f} KB at peak.")
    write_json(args.json_out, "secrets", args, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
