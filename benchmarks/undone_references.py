"""References that leave a transformed attribute as it started: their share, with and without the check.

    python benchmarks/undone_references.py --num 10000

Makes the same Event sample set (seed, shard size, global balance, one process) twice: with the
sampler's `forbid_undone` check off (as data was made before it) and on (the default). Prints per
run: the share of samples with a transformed attribute that ends as it started, the share whose
final state equals the initial one (the empty answer is right), the order-sensitive share, and the
std and min-max of the 1-gram and 2-gram counts (Table 8), with the wall and CPU seconds.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from tvr.trance.data.files import read_samples
from tvr.trance.sampling.jobs import GenerateConfig, generate
from tvr.trance.sampling.sampler import SamplerConfig
from tvr.trance.sampling.stats import balance_stats
from tvr.trance.world import simulator


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--num", type=int, default=10000)
    p.add_argument("--shard-size", type=int, default=500)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, help="keep the sample folders here (OUT/off, OUT/on)")
    args = p.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="tvr-undone-bench-"))
    print(f"{args.num:,} Event samples, shards of {args.shard_size}, seed {args.seed}")
    print(
        "forbid_undone | undone share | empty answer right | order-sensitive | "
        "1-gram std (min-max) | 2-gram std (min-max) | wall s | CPU s"
    )
    for forbid in (False, True):
        config = GenerateConfig(
            num=args.num,
            seed=args.seed,
            shard_size=args.shard_size,
            sampler=SamplerConfig(forbid_undone=forbid),
        )
        w, c = time.perf_counter(), time.process_time()
        path = generate(config, out / ("on" if forbid else "off"), workers=1, progress=False)
        wall, cpu = time.perf_counter() - w, time.process_time() - c
        samples = read_samples(path)
        undone = empty = 0
        for s in samples:
            steps = [(t.obj, t.value) for t in s.steps]
            undone += bool(simulator.unchanged_transformed(s.initial_array, s.final_array, steps))
            empty += simulator.distance(s.initial_array, s.final_array) == 0
        stats = balance_stats(samples)
        g1, g2 = stats["ngrams"]["1-gram"], stats["ngrams"]["2-gram"]
        share = stats["order_sensitive_share"]
        n = len(samples)
        print(
            f"{forbid!s:>13} | {undone / n:12.2%} | {empty / n:18.2%} | {share:15.2%} | "
            f"{g1['std']:.2f} ({g1['min']:.0f}-{g1['max']:.0f}) | "
            f"{g2['std']:.2f} ({g2['min']:.0f}-{g2['max']:.0f}) | {wall:6.1f} | {cpu:5.1f}"
        )


if __name__ == "__main__":
    main()
