"""Evaluation speed: score 100,000 Event predictions on one core; prints samples per second.

    python benchmarks/eval_speed.py [--num 100000]

Samples are drawn without the occlusion rules (faster to make; the evaluator does not care) and
replicated to --num rows; predictions are the reference with a random 30% perturbed, so every
code path (distance, broken rules, order-sensitive subset) does real work. Reports:
  core      ReferenceTable arrays -> scores -> summary (what a trainer's validation calls)
  + order   finding the order-sensitive subset by trying every order of each reference
  end-to-end  reading samples.jsonl and predictions.jsonl from disk, scoring, writing outputs
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("OMP_NUM_THREADS", "1")

from tvr.core.jsonl import write_jsonl
from tvr.trance.data.files import write_samples
from tvr.trance.eval.evaluate import evaluate_files
from tvr.trance.eval.metrics import (
    PAD,
    PredictionTable,
    ReferenceTable,
    order_sensitive_batch,
    score,
    summarize,
)
from tvr.trance.sampling.sampler import SamplerConfig, ShardSampler
from tvr.trance.world import vocab


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num", type=int, default=100_000)
    parser.add_argument(
        "--distinct", type=int, default=2000, help="distinct samples, replicated to --num"
    )
    args = parser.parse_args()
    sampler = ShardSampler(SamplerConfig(occlusion=False), seed=0, shard=0)
    base = [sampler.sample(i) for i in range(args.distinct)]
    samples = []
    for i in range(args.num):
        s = base[i % len(base)]
        samples.append(type(s)(**{**s.__dict__, "id": f"b{i:07d}"}))
    ref = ReferenceTable.from_samples(samples, "event")
    rng = np.random.default_rng(0)
    objs = ref.objs.copy()
    values = ref.values.copy()
    noisy = rng.random(len(objs)) < 0.3
    k = rng.integers(0, vocab.MAX_STEPS, size=len(objs))
    rows = np.flatnonzero(noisy & (values[np.arange(len(objs)), k] != PAD))
    values[rows, k[rows]] = rng.integers(0, vocab.NUM_VALUES, size=len(rows))
    pred = PredictionTable(objs, values, np.ones(len(objs), dtype=bool), {}, [])

    best_core = best_order = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        summary = summarize(ref, pred, score(ref, pred))
        best_core = min(best_core, time.perf_counter() - t0)
        t0 = time.perf_counter()
        order_sensitive_batch(ref.init, ref.objs, ref.values)
        best_order = min(best_order, time.perf_counter() - t0)
    n = args.num
    print(
        f"rows: {n:,}  Acc {summary['metrics']['Acc']:.3f}  LAcc {summary['metrics']['LAcc']:.3f}  "
        f"order-sensitive {summary['order_sensitive']['share']:.3f}"
    )
    print(
        f"core (simulate, distance, summary):       {best_core:.3f} s = {n / best_core:,.0f} samples/s"
    )
    print(
        f"order-sensitive subset (every order):     {best_order:.3f} s = {n / best_order:,.0f} samples/s"
    )
    print(
        f"core + order-sensitive:                   {n / (best_core + best_order):,.0f} samples/s"
    )

    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        write_samples(d / "s.jsonl", samples)
        write_jsonl(
            d / "p.jsonl",
            (
                {
                    "id": sid,
                    "steps": [
                        {"obj": int(o), "value": vocab.VALUES[v]}
                        for o, v in zip(objs[i], values[i], strict=True)
                        if v != PAD
                    ],
                }
                for i, sid in enumerate(ref.ids)
            ),
        )
        t0 = time.perf_counter()
        evaluate_files(d / "s.jsonl", d / "p.jsonl", "event", d / "out")
        dt = time.perf_counter() - t0
    print(f"end-to-end from files (read, score, write): {dt:.2f} s = {n / dt:,.0f} samples/s")


if __name__ == "__main__":
    main()
