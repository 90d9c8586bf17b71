"""Symbolic sampling speed: `tvr sample` of 10,000 Event samples with the occlusion rules on.

python benchmarks/sample_speed.py [--num 10000] [--workers 2]
"""

from __future__ import annotations

import argparse
import tempfile
import time

from tvr.trance.sampling.jobs import GenerateConfig, generate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--shard-size", type=int, default=500)
    args = parser.parse_args()
    config = GenerateConfig(num=args.num, seed=0, shard_size=args.shard_size)
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        generate(config, d, workers=args.workers, progress=False)
        dt = time.perf_counter() - t0
    print(
        f"{args.num:,} Event samples with {args.workers} worker(s): {dt:.1f} s = {args.num / dt:,.0f} samples/s"
    )


if __name__ == "__main__":
    main()
