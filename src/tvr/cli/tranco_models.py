"""`tvr tranco train|predict`: TrancoNet's training runs and its prediction files.

Reads options and calls the library (`tvr.tranco.train`); `tvr.cli.tranco` adds these
sub-commands to `tvr tranco`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tvr.cli._common import (
    add_file_overwrite_option,
    add_run_options,
    apply_threads,
    given_options,
    non_negative_float,
    non_negative_int,
    positive_float,
    positive_int,
)
from tvr.core.errors import UserError

#: option dest -> TrancoTrainConfig field, for the options that map one to one
_FIELDS = (
    "data",
    "model",
    "strategy",
    "clip_weights",
    "encoder_seed",
    "resize",
    "epochs",
    "max_minutes",
    "batch_size",
    "lr",
    "warmup_steps",
    "weight_decay",
    "encoder_lr",
    "train_candidates",
    "clip_frames",
    "tau",
    "dropout",
    "max_steps",
    "min_steps",
    "seed",
    "num_workers",
    "accelerator",
    "devices",
    "precision",
    "feature_cache",
    "feature_batch_size",
    "output_dir",
    "run_name",
    "log_every_n_steps",
)


def register_models(sub: argparse._SubParsersAction) -> None:
    """Add `train` and `predict` to the `tvr tranco` sub-commands."""
    p = sub.add_parser(
        "train",
        help="train TrancoNet (CLIP encoder, T or G decoder) on a TRANCO dataset; resumable",
        description="Train TrancoNet on a dataset in tvr's TRANCO layout (`tvr tranco build` "
        "or `tvr tranco testbed`): InfoNCE over K candidates per sample and epoch, AdamW warmed "
        "up to --lr, the best epoch by val EMR on the stored tiny candidates. A frozen encoder's "
        "features are computed once into the feature cache (DATASET/features). The run folder "
        "holds config.json, metrics.csv, checkpoints/{best,last}.ckpt, and at the end "
        "predictions_tiny.jsonl and predictions_full.jsonl of the test split, which `tvr tranco "
        "evaluate --samples DATASET/test.jsonl` scores. Running it again resumes a killed run. "
        "CLIP weights are read from --clip-weights only, never downloaded.",
    )
    p.add_argument("--data", type=str, help="the dataset folder")
    p.add_argument("--config", type=Path, help="a run's config.json to start from (options win)")
    p.add_argument("--model", help="encoder-decoder: rn101, vitb32, vitb16, small or smallrn "
                   "with -t or -g, or the paper's spelling (ViT-B/32-T); default small-t")  # fmt: skip
    p.add_argument("--strategy", choices=("frozen", "scratch", "finetune"),
                   help="Table 7: the CLIP encoder fixed (default; features cached), trained "
                   "from random weights, or trained from --clip-weights")  # fmt: skip
    p.add_argument("--clip-weights", help="a local CLIP checkpoint (open_clip or OpenAI) whose "
                   "image tower is loaded; without it the encoder is randomly initialised")  # fmt: skip
    p.add_argument("--no-quick-gelu", action="store_true",
                   help="GELU instead of QuickGELU (for LAION-trained open_clip weights)")  # fmt: skip
    p.add_argument("--encoder-seed", type=non_negative_int,
                   help="the random initialisation of an encoder without weights (default 0)")  # fmt: skip
    p.add_argument("--resize", choices=("crop", "squash"),
                   help="images to the square input: CLIP's centre crop (default) or squash")  # fmt: skip
    p.add_argument("--epochs", type=positive_int, help="default 50")
    p.add_argument("--batch-size", type=positive_int, help="default 32")
    p.add_argument("--lr", type=positive_float, help="the lr after warm-up (default 2e-4)")
    p.add_argument("--warmup-steps", type=non_negative_int, help="default 2000 (the paper's)")
    p.add_argument("--weight-decay", type=non_negative_float, help="AdamW's (default 0.01)")
    p.add_argument(
        "--encoder-lr", type=positive_float, help="a trained encoder's lr (default --lr)"
    )
    p.add_argument("--train-candidates", type=positive_int, help="K (default 20, the paper's)")
    p.add_argument("--clip-frames", type=positive_int, help="frames per clip vector (default 3)")
    p.add_argument("--tau", type=positive_float, help="InfoNCE temperature (default 1)")
    p.add_argument("--dropout", type=non_negative_float, help="default 0.1")
    p.add_argument("--max-steps", type=positive_int, help="most clips predicted (default 7)")
    p.add_argument("--min-steps", type=non_negative_int, help="fewest clips predicted (default 1)")
    add_run_options(p, "runs", "MODEL-STRATEGY", devices="auto")
    p.add_argument("--feature-cache", help="the feature cache folder (default DATASET/features)")
    p.add_argument("--feature-batch-size", type=positive_int, help="images per encoder batch "
                   "when features are computed (default 64)")  # fmt: skip
    p.add_argument("--no-predict", action="store_true", help="write no test predictions")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=train_command)

    p = sub.add_parser(
        "predict",
        help="predict a split with a trained TrancoNet (a predictions file to evaluate)",
        description="Greedy predictions of a checkpoint of `tvr tranco train` for a split of a "
        'dataset, {"id", "clips"} per line, against the stored tiny candidates or every clip '
        "of the split (full). Score them with `tvr tranco evaluate --samples DATASET/SPLIT.jsonl "
        "--predictions OUT [--candidates full]`.",
    )
    p.add_argument("--checkpoint", required=True, type=Path, help="best.ckpt or last.ckpt")
    p.add_argument("--data", required=True, type=Path, help="the dataset folder")
    p.add_argument("--split", choices=("train", "val", "test"), default="test")
    p.add_argument("--candidates", choices=("tiny", "full"), default="tiny",
                   help="the stored tiny sets (default) or every clip of the split")  # fmt: skip
    p.add_argument("--out", required=True, type=Path, help="the predictions file to write")
    add_file_overwrite_option(p, "predictions")
    p.add_argument("--feature-cache", type=Path, help="a frozen encoder's feature cache folder "
                   "(default DATASET/features)")  # fmt: skip
    p.add_argument("--accelerator", choices=("auto", "cpu", "gpu"), default="auto",
                   help="auto (a GPU when present, default), cpu or gpu")  # fmt: skip
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=predict_command)


def _torch_device(args: argparse.Namespace) -> str | None:
    """The torch device of --accelerator (None: cuda when present)."""
    return {"auto": None, "cpu": "cpu", "gpu": "cuda"}[args.accelerator]


def config_from_args(args: argparse.Namespace) -> Any:
    from tvr.tranco.train.config import TrancoTrainConfig

    base: dict[str, Any] = {}
    if args.config:
        try:
            base = TrancoTrainConfig.load(args.config).to_dict()
        except (OSError, TypeError, ValueError) as err:
            raise UserError(f"--config {args.config}: not a TrancoNet config ({err})") from None
    base.update(given_options(args, _FIELDS))
    if args.no_quick_gelu:
        base["quick_gelu"] = False
    if args.no_resume:
        base["resume"] = False
    if not base.get("data"):
        raise UserError("no dataset: give --data DATASET (a folder of `tvr tranco build/testbed`)")
    try:
        return TrancoTrainConfig.from_dict(base)
    except (TypeError, ValueError) as err:
        raise UserError(str(err)) from None


def train_command(args: argparse.Namespace) -> int:
    from tvr.tranco.train.run import PREDICT_SPLIT, predictions_path, train

    config = config_from_args(args)
    apply_threads(args)
    try:
        run_dir = train(config, progress_bar=not args.quiet, predict=not args.no_predict)
    except ValueError as err:
        raise UserError(" ".join(str(err).split())) from None
    print(f"run folder: {run_dir}")
    if not args.no_predict:
        for setting in ("tiny", "full"):
            path = predictions_path(run_dir, setting)
            if path.exists():
                print(f"{PREDICT_SPLIT} predictions ({setting}): {path}")
    return 0


def predict_command(args: argparse.Namespace) -> int:
    from tvr.tranco.data.dataset import open_dataset
    from tvr.tranco.train.checkpoint import load_trained
    from tvr.tranco.train.predict import write_split_predictions

    trained = load_trained(args.checkpoint)
    dataset = open_dataset(args.data)
    if trained.config.strategy == "frozen" and not trained.config.clip_weights:
        from tvr.core.notices import warn_random_weights

        warn_random_weights(f"the frozen image encoder of {trained.config.model} (as in its "
                            "training run)", "`tvr tranco train --clip-weights`",
                            trained.config.encoder_seed)  # fmt: skip
    count = write_split_predictions(
        trained,
        dataset,
        args.split,
        args.candidates,
        args.out,
        _torch_device(args),
        args.feature_cache,
        progress=not args.quiet,
    )
    print(f"wrote {count} predictions of {args.split} ({args.candidates} candidates) to {args.out}")
    return 0
