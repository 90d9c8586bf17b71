"""Evaluation speed: score 100,000 Event predictions on one core; prints samples per second.

    python benchmarks/eval_speed.py [--num 100000]
    python benchmarks/eval_speed.py --samples /tmp/ev100k/samples.jsonl [--predictions P]

Samples are drawn without the occlusion rules (faster to make; the evaluator does not care) and
replicated to --num rows, or read from --samples (e.g. made by `tvr sample --setting event --num
100000`); predictions are the reference with a random 30% perturbed (or --predictions), so every
code path (distance, broken rules, order-sensitive subset) does real work. Reports:
  core      ReferenceTable arrays -> scores -> summary (what a trainer's validation calls)
  + order   finding the order-sensitive subset by trying every order of each reference
  end to end  `tvr evaluate` as a library call: read the samples and the predictions, score,
            write summary.json, detail.jsonl and config.json; on the same files, in one run:
    old path     what evaluate_files did before the reference cache: samples.jsonl -> Sample
                 objects -> ReferenceTable.from_samples, predictions line by line, detail.jsonl
                 from one dict a row
    first run    evaluate_files with no samples.ref.npz: it parses the JSONL and writes the cache
    warm run     evaluate_files with the cache present (best of --repeat), with its parts
The outputs of the three are compared byte for byte.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("OMP_NUM_THREADS", "1")

from tvr.core.jsonl import write_json, write_jsonl
from tvr.core.manifest import sha256_file
from tvr.trance.data.files import read_samples, write_samples
from tvr.trance.eval.detail import detail_jsonl
from tvr.trance.eval.evaluate import evaluate_files, write_bytes
from tvr.trance.eval.metrics import (
    PAD,
    PredictionTable,
    ReferenceTable,
    details,
    read_predictions,
    score,
    summarize,
)
from tvr.trance.eval.references import cache_path, reference_table
from tvr.trance.sampling.sampler import SamplerConfig, ShardSampler
from tvr.trance.world import vocab
from tvr.trance.world.simulator import order_sensitive_batch

OUTPUTS = ("summary.json", "detail.jsonl", "config.json")


def old_evaluate(samples_path: Path, predictions_path: Path, setting: str, out: Path) -> dict:
    """`evaluate_files` as it was before the reference cache (same outputs, old code path)."""
    ref = ReferenceTable.from_samples(read_samples(samples_path), setting)
    pred = read_predictions(predictions_path, ref, fast=False)
    s = score(ref, pred)
    summary = summarize(ref, pred, s)
    summary["samples_file"] = str(samples_path)
    summary["predictions_file"] = str(predictions_path)
    if pred.problems:
        summary["problems"] = pred.problems[:100]
    write_jsonl(out / "detail.jsonl", details(ref, pred, s))
    write_json(out / "summary.json", summary)
    write_json(
        out / "config.json",
        {
            "samples": str(samples_path),
            "predictions": str(predictions_path),
            "setting": setting,
            "lenient": False,
            "max_steps_policy": "simulate",
            "views": list(vocab.VIEWS),
        },
    )
    return summary


def warm_parts(samples_path: Path, predictions_path: Path, out: Path) -> dict[str, float]:
    """Seconds of each part of a warm evaluate_files (the same calls, timed one by one)."""
    t = [time.perf_counter()]
    ref = reference_table(samples_path, "event")
    t.append(time.perf_counter())
    pred = read_predictions(predictions_path, ref)
    t.append(time.perf_counter())
    s = score(ref, pred)
    summarize(ref, pred, s)
    t.append(time.perf_counter())
    write_bytes(out / "detail.jsonl", detail_jsonl(ref, pred, s))
    t.append(time.perf_counter())
    names = ("references (cache)", "predictions", "score + summary", "detail.jsonl")
    return {n: b - a for n, a, b in zip(names, t, t[1:], strict=False)}


def timed(fn: Any) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def perturbed(ref: ReferenceTable) -> PredictionTable:
    rng = np.random.default_rng(0)
    objs = ref.objs.copy()
    values = ref.values.copy()
    noisy = rng.random(len(objs)) < 0.3
    k = rng.integers(0, vocab.MAX_STEPS, size=len(objs))
    rows = np.flatnonzero(noisy & (values[np.arange(len(objs)), k] != PAD))
    values[rows, k[rows]] = rng.integers(0, vocab.NUM_VALUES, size=len(rows))
    return PredictionTable(objs, values, np.ones(len(objs), dtype=bool), {}, [])


def write_predictions(path: Path, ref: ReferenceTable, pred: PredictionTable) -> None:
    write_jsonl(
        path,
        (
            {
                "id": sid,
                "steps": [
                    {"obj": int(o), "value": vocab.VALUES[v]}
                    for o, v in zip(pred.objs[i], pred.values[i], strict=True)
                    if v != PAD
                ],
            }
            for i, sid in enumerate(ref.ids)
        ),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num", type=int, default=100_000)
    parser.add_argument(
        "--distinct", type=int, default=2000, help="distinct samples, replicated to --num"
    )
    parser.add_argument("--samples", type=Path, help="an Event samples.jsonl to use instead")
    parser.add_argument("--predictions", type=Path, help="its predictions (default: perturbed)")
    parser.add_argument("--repeat", type=int, default=3, help="warm runs; the best is reported")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        if args.samples:
            samples_path = d / "samples.jsonl"
            os.symlink(args.samples.resolve(), samples_path)  # the cache goes to the temp folder
            ref = reference_table(samples_path, "event", cache=False)
        else:
            sampler = ShardSampler(SamplerConfig(occlusion=False), seed=0, shard=0)
            base = [sampler.sample(i) for i in range(args.distinct)]
            samples = []
            for i in range(args.num):
                s = base[i % len(base)]
                samples.append(type(s)(**{**s.__dict__, "id": f"b{i:07d}"}))
            samples_path = d / "samples.jsonl"
            write_samples(samples_path, samples)
            ref = ReferenceTable.from_samples(samples, "event")
            del samples, base
        pred = perturbed(ref)
        predictions_path = args.predictions or d / "predictions.jsonl"
        if not args.predictions:
            write_predictions(predictions_path, ref, pred)
        n = len(ref.ids)

        best_core = best_order = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            summary = summarize(ref, pred, score(ref, pred))
            best_core = min(best_core, time.perf_counter() - t0)
            t0 = time.perf_counter()
            order_sensitive_batch(ref.init, ref.objs, ref.values)
            best_order = min(best_order, time.perf_counter() - t0)
        del ref, pred
        m = summary["metrics"]
        print(
            f"rows: {n:,}  Acc {m['Acc']:.3f}  LAcc {m['LAcc']:.3f}  "
            f"order-sensitive {summary['order_sensitive']['share']:.3f}"
            + (f"  ({args.samples})" if args.samples else "")
        )
        print(f"core (simulate, distance, summary):   {best_core:.3f} s = {n / best_core:,.0f}/s")
        print(f"order-sensitive subset (every order): {best_order:.3f} s = {n / best_order:,.0f}/s")
        print(f"core + order-sensitive:               {n / (best_core + best_order):,.0f}/s")

        print("end to end from files (read samples and predictions, score, write the outputs):")
        print("  wall time, and CPU time of this process (= wall on an idle core)")

        def report(name: str, wall: float, cpu: float, ratio: str = "") -> None:
            print(
                f"  {name:<36} {wall:7.3f} s = {n / wall:9,.0f} samples/s   "
                f"CPU {cpu:7.3f} s = {n / cpu:9,.0f}/s{ratio}"
            )

        def ratio(a: tuple[float, float], b: tuple[float, float]) -> str:
            return f"   ({a[0] / b[0]:.1f}x wall, {a[1] / b[1]:.1f}x CPU)"

        old = timed(lambda: old_evaluate(samples_path, predictions_path, "event", d / "old"))
        report("old path (JSONL -> Sample objects)", *old)
        cache_path(samples_path).unlink(missing_ok=True)
        first = timed(lambda: evaluate_files(samples_path, predictions_path, "event", d / "first"))
        report("first run (parses, writes the cache)", *first, ratio(old, first))
        warm = min(
            timed(lambda: evaluate_files(samples_path, predictions_path, "event", d / "warm"))
            for _ in range(args.repeat)
        )
        report(f"warm run (cache; best of {args.repeat})", *warm, ratio(old, warm))
        parts = warm_parts(samples_path, predictions_path, d / "parts")
        print("    " + ", ".join(f"{k} {v:.3f} s" for k, v in parts.items()))
        same = all(
            filecmp.cmp(d / "old" / f, d / run / f, shallow=False)
            for run in ("first", "warm")
            for f in OUTPUTS
        )
        print(f"  outputs of the three byte-identical: {'yes' if same else 'NO'}")
        size = samples_path.stat().st_size
        hashing = timed(lambda: sha256_file(samples_path))
        print(
            f"  cache: {cache_path(samples_path).stat().st_size / 1e6:.1f} MB; sha256 of the "
            f"{size / 1e6:.0f} MB samples file (paid only when its stat changed): "
            f"{hashing[0]:.3f} s wall, {hashing[1]:.3f} s CPU"
        )


if __name__ == "__main__":
    main()
