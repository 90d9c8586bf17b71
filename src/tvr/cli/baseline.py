"""`tvr baseline`: write the predictions of the oracle, reversed-order or random baseline."""

from __future__ import annotations

import argparse
from pathlib import Path

from tvr.core.jsonl import write_jsonl
from tvr.trance.data.files import read_samples
from tvr.trance.eval.baselines import BASELINES, predict
from tvr.trance.world.vocab import SETTINGS


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "baseline",
        help="write baseline predictions (oracle, reversed, random)",
        description="oracle: the reference steps; reversed: the reference steps in reverse order, "
        "keeping the order of steps that set the same attribute of one object (loose correct, "
        "but wrong where the order matters); random: 1..4 uniformly random "
        "(object, value) steps (1 in basic). Output: a predictions JSONL for `tvr evaluate`.",
    )
    p.add_argument("name", choices=BASELINES, help="which baseline")
    p.add_argument("--samples", required=True, type=Path, help="samples.jsonl")
    p.add_argument("--setting", choices=SETTINGS, default="event", help="default event")
    p.add_argument("--seed", type=int, default=0, help="seed of the random baseline")
    p.add_argument("--out", required=True, type=Path, help="predictions file to write")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    samples = read_samples(args.samples)
    n = write_jsonl(args.out, predict(args.name, samples, args.setting, args.seed))
    print(f"wrote {n} {args.name} predictions to {args.out}")
    return 0
