"""`tvr predict`: greedy predictions of a trained checkpoint, in the format `tvr evaluate` reads."""

from __future__ import annotations

import argparse
from pathlib import Path

from tvr.cli._common import add_file_overwrite_option
from tvr.cli.train import add_source_options, one_line_errors
from tvr.core.errors import UserError
from tvr.core.extras import missing_extra


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "predict",
        help="write predictions.jsonl of a trained model",
        description="Decode greedily with a checkpoint written by `tvr train` and write one JSON "
        'line per sample: {"id", "steps": [{"obj", "value"}]} (View adds "view").',
    )
    one_line_errors(p)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--run", type=Path, help="run folder of `tvr train` (its best checkpoint)")
    src.add_argument("--checkpoint", type=Path, help="a checkpoint file")
    p.add_argument("--split", help="split to predict (default: the run's predict_split, else val)")
    add_source_options(p, "the dataset folder to predict, to predict other data than the run's")
    p.add_argument("--out", type=Path, help="output file (default RUN/predictions.jsonl)")
    add_file_overwrite_option(p, "predictions")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        from tvr.trance.train.predictions import load_model, write_predictions
    except ImportError as err:
        raise missing_extra(err, "prediction") from None
    from tvr.trance.train.config import TrainConfig

    ckpt = args.checkpoint or args.run / "checkpoints" / "best.ckpt"
    if not Path(ckpt).is_file():
        raise UserError(f"{ckpt}: no such checkpoint")
    out = args.out or (args.run / "predictions.jsonl" if args.run else Path("predictions.jsonl"))
    if out.is_dir():
        raise UserError(f"--out {out} is a folder; give a file name")
    _, config = load_model(ckpt)
    if args.data or args.source:
        # other data: the source follows --data as in `tvr train`
        changed = {"data": args.source, "data_root": args.data}
        try:
            config = TrainConfig.from_dict({**config.to_dict(), **changed})
        except ValueError as err:
            raise UserError(str(err)) from None
    try:
        path = write_predictions(ckpt, out, args.split, config)
    except ValueError as err:
        raise UserError(" ".join(str(err).split())) from None
    print(f"wrote {path}")
    return 0
