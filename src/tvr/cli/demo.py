"""`tvr demo`: the main job on a small built-in default: sample, check balance, score baselines."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from tvr.cli._common import positive_int
from tvr.core.jsonl import prepare_output_folder, write_jsonl
from tvr.trance.choices import BASELINES


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "demo",
        help="sample a small Event set and score the oracle, reversed and random baselines",
        description="Makes OUT/samples (a balanced Event sample set), writes each baseline's "
        "predictions and scores them with the simulator into OUT/eval-NAME/. Takes well under a "
        "minute with the defaults.",
    )
    p.add_argument(
        "--out", type=Path, default=Path("runs/demo"), help="output folder (default runs/demo)"
    )
    p.add_argument("--num", type=positive_int, default=400, help="samples (default 400)")
    p.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    p.add_argument("--workers", type=positive_int, default=2, help="parallel processes (default 2)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from tvr.trance.data.files import read_samples
    from tvr.trance.eval.baselines import predict
    from tvr.trance.eval.evaluate import evaluate_files, print_summary
    from tvr.trance.sampling.jobs import GenerateConfig, generate

    console = Console(soft_wrap=True)  # a status line is one line, also when piped
    start = time.perf_counter()
    prepare_output_folder(args.out)
    config = GenerateConfig.for_setting(
        "event", num=args.num, seed=args.seed, shard_size=max(1, args.num // 4)
    )
    samples_path = generate(config, args.out / "samples", workers=args.workers)
    samples = read_samples(samples_path)
    sensitive = sum(bool(s.order_sensitive) for s in samples)
    console.print(
        f"sampled {len(samples)} Event samples in {time.perf_counter() - start:.1f} s "
        f"({sensitive} order-sensitive) -> {samples_path}"
    )
    for name in BASELINES:
        pred_path = args.out / f"predictions-{name}.jsonl"
        write_jsonl(pred_path, predict(name, samples, "event", seed=args.seed))
        summary = evaluate_files(samples_path, pred_path, "event", args.out / f"eval-{name}")
        print_summary(summary, console, title=f"{name} baseline, Event")
    console.print(f"done in {time.perf_counter() - start:.1f} s; outputs in {args.out}")
    return 0
