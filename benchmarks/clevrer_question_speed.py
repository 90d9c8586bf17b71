"""CLEVRER question generation on simulated videos: ms per video, questions per video, balance.

python benchmarks/clevrer_question_speed.py [--videos 100] [--seed 0]

Simulates the videos first (not timed; `tvr.clevrer.world`), then generates every video's
questions with one Balancer, as one shard would, and prints wall and CPU milliseconds per video,
executor runs per video, questions per video by type against the release's, options per
multiple-choice question, the answer counts of each descriptive sub-type, and how many candidate
questions and options each robustness rule turned away (`generate_questions(..., drops=...)`). Pin to one core
(`taskset -c 0`) for a per-core figure; on a shared machine the CPU figure is the steadier one.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from typing import ClassVar

import numpy as np

from tvr.clevrer.programs.executor import CONVENTIONS
from tvr.clevrer.questions import generate as gen
from tvr.clevrer.questions.balance import ANSWERS, Balancer
from tvr.clevrer.world.facts import facts_from_video
from tvr.clevrer.world.video import simulate_video


class CountingRunner(gen.Runner):
    """The generator's runner, keeping a handle on every instance to sum executor runs."""

    made: ClassVar[list[gen.Runner]] = []

    def __init__(self, facts, drops=None) -> None:
        super().__init__(facts, drops)
        CountingRunner.made.append(self)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--videos", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    t0 = time.perf_counter()
    facts = [facts_from_video(simulate_video(args.seed, i)) for i in range(args.videos)]
    sim_s = time.perf_counter() - t0

    gen.Runner = CountingRunner  # count executor runs (same behaviour)
    balancer = Balancer()
    drops: Counter = Counter()
    questions = []
    wall0, cpu0 = time.perf_counter(), time.process_time()
    for i, f in enumerate(facts):
        rng = np.random.default_rng([args.seed, i, 1])
        questions.append(gen.generate_questions(f, rng, balancer=balancer, drops=drops))
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    n = args.videos
    runs = sum(r.executions for r in CountingRunner.made)

    print(f"{n} videos (simulated in {sim_s:.1f} s wall, not counted)")
    print(f"questions: {wall / n * 1000:.1f} ms/video wall, {cpu / n * 1000:.1f} ms/video CPU, "
          f"{runs / n:.0f} executor runs/video, {n / cpu:.1f} videos per CPU second")
    types = Counter(q["question_type"] for qs in questions for q in qs)
    total = sum(types.values())
    release_total = sum(gen.RELEASE_COUNTS.values())
    print(f"questions per video: {total / n:.2f} (release {release_total / gen.RELEASE_VIDEOS:.2f})")
    print(f"{'type':15} {'per video':>9} {'share':>7} {'release':>8} {'options':>22}")
    for t, count in gen.RELEASE_COUNTS.items():
        options = Counter(len(q["choices"]) for qs in questions for q in qs
                          if q["question_type"] == t and "choices" in q)
        correct = [c["answer"] == "correct" for qs in questions for q in qs
                   if q["question_type"] == t for c in q.get("choices", [])]
        opt = " ".join(f"{k}:{options[k]}" for k in sorted(options))
        if correct:
            opt += f" ({100 * np.mean(correct):.0f}% correct)"
        print(f"{t:15} {types[t] / n:9.2f} {types[t] / max(total, 1):7.1%} "
              f"{count / release_total:8.1%} {opt:>22}")
    candidates = sum(len(r._answers) + len(r._choices) for r in CountingRunner.made)
    print(f"turned away, of {candidates} candidate programs executed (descriptive questions and "
          f"options; several rules may turn one away):")
    # every convention rule, also those that turned nothing away, then the generator's own rules
    for rule in [*CONVENTIONS, *sorted(set(drops) - set(CONVENTIONS))]:
        k = drops[rule]
        print(f"  {rule:25} {k:6d} ({100 * k / max(candidates, 1):.1f}%, {k / n:.2f} per video)")
    print("descriptive answers (balancer counts):")
    for subtype, space in ANSWERS.items():
        counts = [balancer.answers[subtype][a] for a in space]
        print(f"  {subtype:15} " + " ".join(f"{a}:{c}" for a, c in zip(space, counts, strict=True)))


if __name__ == "__main__":
    main()
