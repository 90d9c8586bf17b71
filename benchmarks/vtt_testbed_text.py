"""The TRANCE text testbed's language, without rendering: what `tvr vtt testbed` would write.

    python benchmarks/vtt_testbed_text.py [--num 2000] [--seed 0] [--shard-size 20]

Samples the testbed's TRANCE samples (the same shards and seeds as `tvr vtt testbed --num N`) and
describes them with both phrasings ("varied" and "fixed"), then prints, for each: descriptions,
distinct descriptions, mean words per description, how the objects were named (minimal,
spatial, ambiguous), and the seconds spent sampling and describing. The images are not rendered
(`tvr vtt testbed` prints its own speed).
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

from tvr.testbeds.text import TextTestbedConfig, describe_sample, wording
from tvr.trance.sampling.sampler import SamplerConfig, ShardSampler


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--num", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shard-size", type=int, default=20)
    args = ap.parse_args()
    config = TextTestbedConfig(num=args.num, seed=args.seed, shard_size=args.shard_size)
    t0 = time.perf_counter()
    samples = []
    for shard in range(config.num_shards):
        sampler = ShardSampler(SamplerConfig(), config.seed, shard)
        samples += [sampler.sample(i) for i in range(config.shard_count(shard))]
    print(f"sampled {len(samples)} TRANCE Event samples in {time.perf_counter() - t0:.1f} s")
    for phrasing in ("varied", "fixed"):
        chosen = TextTestbedConfig(num=args.num, seed=args.seed, shard_size=args.shard_size,
                                   phrasing=phrasing)  # fmt: skip
        t0 = time.perf_counter()
        steps = [t for n, s in enumerate(samples) for t in describe_sample(s, wording(chosen, n))]
        seconds = time.perf_counter() - t0
        texts = [t.text for t in steps]
        words = sum(len(t.split()) for t in texts) / len(texts)
        named = dict(Counter(t.reference for t in steps))
        print(f"{phrasing}: {len(texts)} descriptions, {len(set(texts))} distinct, "
              f"{words:.2f} words on average, objects named {named}; described in "
              f"{seconds:.2f} s")  # fmt: skip


if __name__ == "__main__":
    main()
