"""Global against per-shard balance: n-gram spread and sampling speed of `tvr sample`.

    taskset -c 0 python benchmarks/balance_scope.py --num 20000 --shard-size 500

Makes the same sample set (seed, shard size, sampler options) once per balance scope in one
process (`--workers 1`), and prints per scope: samples per wall and per CPU second, the std and
min-max of the 1-gram and 2-gram counts (Table 8), and the spread of steps and move types.
Sample folders go to --out (a temporary folder by default), so `tvr stats` can read them again.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from tvr.trance.choices import BALANCE_SCOPES
from tvr.trance.data.files import read_samples
from tvr.trance.sampling.balance import BalanceCounts
from tvr.trance.sampling.jobs import GenerateConfig, generate
from tvr.trance.sampling.sampler import SamplerConfig


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--num", type=int, default=20000)
    p.add_argument("--shard-size", type=int, default=500)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-occlusion", action="store_true")
    p.add_argument("--scopes", nargs="+", default=list(BALANCE_SCOPES), choices=BALANCE_SCOPES)
    p.add_argument("--out", type=Path, help="keep the sample folders here (OUT/<scope>)")
    args = p.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="tvr-balance-bench-"))
    sampler = SamplerConfig(occlusion=not args.no_occlusion)
    print(
        f"{args.num:,} Event samples, shards of {args.shard_size}, seed {args.seed}, "
        f"occlusion {'off' if args.no_occlusion else 'on'}"
    )
    for scope in args.scopes:
        config = GenerateConfig(
            num=args.num,
            seed=args.seed,
            shard_size=args.shard_size,
            sampler=sampler,
            balance_scope=scope,
        )
        w, c = time.perf_counter(), time.process_time()
        path = generate(config, out / scope, progress=False)
        wall, cpu = time.perf_counter() - w, time.process_time() - c
        counts = BalanceCounts.of_samples(read_samples(path))
        table = counts.ngram_table()
        steps = counts.steps[1:]
        moves = counts.move_types
        print(
            f"{scope:>6}: {args.num / wall:6.1f} samples/s wall, {args.num / cpu:6.1f} per CPU s; "
            f"1-gram std {table[1]['std']:.3f} ({table[1]['min']:.0f}-{table[1]['max']:.0f}), "
            f"2-gram std {table[2]['std']:.3f} ({table[2]['min']:.0f}-{table[2]['max']:.0f}); "
            f"steps {steps.min()}-{steps.max()}, move types {moves.min()}-{moves.max()}"
        )


if __name__ == "__main__":
    main()
