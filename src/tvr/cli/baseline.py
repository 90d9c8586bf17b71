"""`tvr baseline`: write the predictions of the oracle, reversed-order or random baseline."""

from __future__ import annotations

import argparse
from pathlib import Path

from tvr.cli._common import add_data_option, add_file_overwrite_option
from tvr.core.jsonl import write_jsonl
from tvr.trance.choices import BASELINES
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
    p.add_argument("name", choices=BASELINES, metavar="KIND", help="which baseline: "
                   + ", ".join(BASELINES))  # fmt: skip
    add_data_option(p, "samples.jsonl, or a dataset folder (--split of a `tvr generate` one)")
    p.add_argument("--split", default="test", help="the split of a dataset folder (default test)")
    p.add_argument("--setting", choices=SETTINGS,
                   help="the setting, where the data does not say it (its config.json); "
                   "default event")  # fmt: skip
    p.add_argument("--seed", type=int, default=0, help="seed of the random baseline")
    p.add_argument("--out", required=True, type=Path, help="predictions file to write")
    add_file_overwrite_option(p, "predictions")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tvr.trance.data.files import read_samples, samples_file, setting_of_data
    from tvr.trance.eval.baselines import predict

    path = samples_file(args.data, args.split)
    setting = setting_of_data(path, args.setting)
    samples = read_samples(path)
    n = write_jsonl(args.out, predict(args.name, samples, setting, args.seed))
    print(f"wrote {n} {args.name} predictions to {args.out}")
    return 0
