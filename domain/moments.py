"""The moment prior: a memory said in the same sitting as the best candidates counts for more.

A conversation spreads one topic over many turns, and an answer's turns often share few
words with the question: only the turn that names the subject is found, while its
neighbours (the reply that holds the fact, the follow-up) score low. The moment prior lifts
the best few candidates of each moment by how well the moment's best candidate scored, so
the turns of the sittings the question is about rise above lone matches from unrelated ones.

A moment is a run of memories of one session saved with no gap longer than a window
between one and the next (memories without a session form their own runs). A run's
strength is the best fused score among the `depth` best candidates it holds, relative to
the best of all (0 for a run with none of them). The `lifted` best candidates of each run
lose `weight` x (1 - its strength), the rest of the run the whole weight: the best run's
first few lose nothing, and a long sitting cannot fill every slot, so an answer spread
over two sittings keeps its second one. When every candidate shares one run (a store saved
in one sitting) the scores are unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

from .spread import moment_of

# How many of the best fused candidates speak for their moment.
MOMENT_DEPTH = 50
# How many of a moment's best candidates take its strength. Chosen on LoCoMo conversations
# 1-5 (plain shape): 3 lost open-domain questions, whose answer lies deeper in a sitting;
# lifting every candidate of the sitting crowded a second sitting out of the results.
MOMENT_LIFTED = 5


def moment_runs(
    sessions: Sequence[str | None], created: Sequence[str], window_seconds: float
) -> list[int]:
    """A run number per memory (its session and created_at): same session, each within
    `window_seconds` of the one saved before it in that session (a chain, so a long sitting
    stays one run). Each distinct timestamp is read once: a batch of saves shares one."""
    if len(sessions) != len(created):
        raise ValueError("sessions and created must be the same length")
    seconds = {stamp: moment_of(None, stamp).at for stamp in set(created)}
    order = sorted(range(len(created)),
                   key=lambda i: (sessions[i] is not None, sessions[i] or "", seconds[created[i]]))
    runs = [0] * len(created)
    run = -1
    previous: tuple[str | None, float] | None = None
    for i in order:
        here = (sessions[i], seconds[created[i]])
        if previous is None or here[0] != previous[0] or here[1] - previous[1] > window_seconds:
            run += 1
        runs[i] = run
        previous = here
    return runs


def moment_prior(
    base: Sequence[float], runs: Sequence[int], weight: float,
    depth: int = MOMENT_DEPTH, lifted: int = MOMENT_LIFTED,
) -> list[float]:
    """`base` (fused scores before late interaction) less `weight` x (1 - the strength of
    the candidate's run) for the `lifted` best of each run, less `weight` for the others.
    Unchanged with a weight of zero, one run, or no positive best."""
    if len(base) != len(runs):
        raise ValueError("base and runs must be the same length")
    if weight <= 0 or not base or len(set(runs)) <= 1:
        return list(base)
    order = sorted(range(len(base)), key=lambda i: base[i], reverse=True)
    best = base[order[0]]
    if best <= 0:
        return list(base)
    strength: dict[int, float] = {}
    for i in order[:depth]:  # best first, so a run's first entry is its best
        strength.setdefault(runs[i], max(base[i], 0.0) / best)
    taken: dict[int, int] = {}
    out = [value - weight for value in base]
    for i in order:
        run = runs[i]
        if taken.get(run, 0) < lifted:
            taken[run] = taken.get(run, 0) + 1
            out[i] = base[i] - weight * (1.0 - strength.get(run, 0.0))
    return out
