"""Samples for render tests and benchmarks, made by the real sampler (one source of truth)."""

from __future__ import annotations

from typing import Any

from tvr.trance.sampling.sampler import SamplerConfig, ShardSampler


def random_samples(n: int, seed: int = 0, prefix: str = "s") -> list[dict[str, Any]]:
    """`n` sample dicts of shard 0 of `seed`, with ids `{prefix}000000`, `{prefix}000001`, ..."""
    sampler = ShardSampler(SamplerConfig(), seed=seed, shard=0)
    out = []
    for i in range(n):
        d = sampler.sample(i).to_dict()
        d["id"] = f"{prefix}{i:06d}"
        out.append(d)
    return out
