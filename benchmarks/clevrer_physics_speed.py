"""Symbolic CLEVRER videos per second on one core: physics, counterfactual runs, events, facts.

python benchmarks/clevrer_physics_speed.py [--videos 200] [--seed 0] [--physics-hz 100]
    [--contact-threshold 0.02]

One process, videos 0..N-1 of a seed: scene sampling with its rejected attempts, the factual
run, every counterfactual run, the events and causal graph of every run, and SceneFacts (no
questions). Prints wall and CPU rates and what the videos hold: attempts, rules broken by the
videos kept after `max_attempts`, events, the deepest object overlap and floor gap seen.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time
from collections import Counter

import numpy as np

from tvr.clevrer.vocab import SHOWN_FRAMES
from tvr.clevrer.world.config import WorldConfig
from tvr.clevrer.world.events import causal_graph, run_events
from tvr.clevrer.world.facts import facts_from_video
from tvr.clevrer.world.video import floor_gap, penetration, simulate_video


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--videos", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--physics-hz", type=int, default=WorldConfig().physics_hz)
    parser.add_argument(
        "--contact-threshold", type=float, default=WorldConfig().contact_threshold
    )
    args = parser.parse_args()
    config = dataclasses.replace(
        WorldConfig(), physics_hz=args.physics_hz, contact_threshold=args.contact_threshold
    )

    simulate_video(args.seed, 10**6, config)  # warm up: imports, the pybullet client
    t_wall, t_cpu = time.perf_counter(), time.process_time()
    stats: Counter[str] = Counter()
    broken: Counter[str] = Counter()
    pen, gap, gaps, attempts = [], [], [], []
    for index in range(args.videos):
        video = simulate_video(args.seed, index, config)
        for run in [video.factual, *video.counterfactual.values()]:
            causal_graph(run_events(run))
        facts_from_video(video)
        events = run_events(video.factual)
        shown = [e for e in events if e.frame < SHOWN_FRAMES]
        stats["objects"] += len(video.spec.objects)
        stats["collisions_shown"] += sum(e.kind == "collision" for e in shown)
        stats["in_out_shown"] += sum(e.kind != "collision" for e in shown)
        stats["events_unseen"] += len(events) - len(shown)
        stats["with_unseen_collision"] += any(
            e.kind == "collision" and e.frame >= SHOWN_FRAMES for e in events
        )
        stats["cf_simulated"] += int((video.factual.first_contact >= 0).sum())
        stats["cf_copied"] += int((video.factual.first_contact < 0).sum())
        broken.update(video.broken_rules)
        stats["kept_breaking_rules"] += bool(video.broken_rules)
        pen.append(penetration(video))
        gaps.append(max(r.max_contact_gap for r in [video.factual, *video.counterfactual.values()]))
        gap.append(floor_gap(video))
        attempts.append(video.attempts)
    wall = time.perf_counter() - t_wall
    cpu = time.process_time() - t_cpu

    n = args.videos
    print(
        f"{n} videos, seed {args.seed}, physics {config.physics_hz} Hz, contact threshold "
        f"{config.contact_threshold}, pid {os.getpid()}, load {os.getloadavg()[0]:.2f} at the end"
    )
    print(f"  wall {wall:.2f} s = {n / wall:.2f} videos/s; CPU {cpu:.2f} s = {n / cpu:.2f} videos/s")
    print(
        f"  attempts per video: mean {np.mean(attempts):.2f}, max {max(attempts)}; "
        f"kept while breaking rules: {stats['kept_breaking_rules']} {dict(broken)}"
    )
    print(
        "  per video: "
        + ", ".join(
            f"{k} {stats[k] / n:.2f}"
            for k in (
                "objects",
                "collisions_shown",
                "in_out_shown",
                "events_unseen",
                "cf_simulated",
                "cf_copied",
            )
        )
    )
    print(
        f"  videos with a collision after the shown frames: {stats['with_unseen_collision']} "
        f"({stats['with_unseen_collision'] / n:.0%})"
    )
    print(
        f"  deepest object overlap {max(pen):.4f} (median video {np.median(pen):.4f}); "
        f"widest contact gap {max(gaps):.4f} (median video {np.median(gaps):.4f}); "
        f"largest |z - half height| {max(gap):.4f}"
    )


if __name__ == "__main__":
    main()
