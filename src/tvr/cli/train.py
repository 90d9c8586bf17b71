"""`tvr train`: train a TranceNet model (or fine-tune it with REINFORCE); see docs/models.md."""

from __future__ import annotations

import argparse
from pathlib import Path

from tvr.cli._common import size_option, split_counts_option
from tvr.core.errors import UserError
from tvr.trance.world.vocab import SETTINGS

#: flag -> TrainConfig field, for the options that map one to one
_FIELDS = (
    "model",
    "setting",
    "data",
    "data_root",
    "train_size",
    "epochs",
    "max_minutes",
    "batch_size",
    "lr",
    "lr_drop_epoch",
    "translate",
    "seed",
    "num_workers",
    "accelerator",
    "devices",
    "precision",
    "precise_bn_batches",
    "output_dir",
    "run_name",
    "predict_split",
    "reward",
    "rl_variant",
    "rl_samples",
    "rl_baseline",
    "init_checkpoint",
)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "train",
        help="train a TranceNet model (CNN/ResNet/BCNN/DUDA encoders, GRU/Transformer decoders)",
        description="Train with PyTorch Lightning; the run folder gets config.json, metrics.csv, "
        "tensorboard/, checkpoints/ (best.ckpt by validation Acc, last.ckpt) and predictions.jsonl "
        "for `tvr evaluate`. Running it again on the same run folder resumes from last.ckpt.",
    )
    p.add_argument("--config", type=Path, help="config.json of an earlier run; flags override it")
    p.add_argument("--model", help="e.g. cnn+-g, resnet--t, bcnn-g, duda-g (default resnet--g)")
    p.add_argument("--setting", choices=SETTINGS)
    p.add_argument("--data", help="dataset source (default synthetic)")
    p.add_argument("--data-root", help="where the dataset source reads from")
    p.add_argument(
        "--synthetic-sizes", type=split_counts_option, help="split sizes of the synthetic source"
    )
    p.add_argument(
        "--image-size", type=size_option, help="WIDTHxHEIGHT fed to the model (default 160x120)"
    )
    p.add_argument(
        "--train-size",
        type=int,
        help="train on a seeded random subset of N training samples (nested across N for one "
        "seed; the journal's training-size curves)",
    )
    p.add_argument("--epochs", type=int)
    p.add_argument(
        "--max-minutes",
        type=float,
        help="stop fitting after this many minutes (the lr still drops at half of --epochs); "
        "the best checkpoint so far is predicted",
    )
    p.add_argument("--batch-size", type=int, help="in all, split over the devices (default 128)")
    p.add_argument("--lr", type=float)
    p.add_argument("--lr-drop-epoch", type=int, help="lr / 10 from this epoch (default half)")
    p.add_argument("--translate", type=float, help="max random translation (default 0.05)")
    p.add_argument("--seed", type=int)
    p.add_argument("--num-workers", type=int)
    p.add_argument("--accelerator", help="auto, cpu or gpu")
    p.add_argument("--devices", help="auto or a number of devices")
    p.add_argument("--precision", help="auto (mixed on GPUs), 32-true, bf16-mixed, 16-mixed")
    p.add_argument(
        "--channels-last",
        action="store_true",
        help="NHWC convolutions; with --precision bf16-mixed the fast CPU setting (docs/models.md)",
    )
    p.add_argument(
        "--precise-bn-batches",
        type=int,
        help="recompute BatchNorm statistics over N training batches before each validation "
        "(default 0: off, the papers' recipe)",
    )
    p.add_argument("--output-dir", help="folder of run folders (default runs)")
    p.add_argument("--run-name", help="run folder name (default SETTING-MODEL)")
    p.add_argument("--predict-split", help="split written to predictions.jsonl (default test)")
    p.add_argument("--no-resume", action="store_true", help="start over even if last.ckpt exists")
    rl = p.add_argument_group("REINFORCE fine-tuning (Table 4)")
    rl.add_argument("--reinforce", action="store_true", help="fine-tune with simulator rewards")
    rl.add_argument("--init-checkpoint", help="checkpoint of the trained model to start from")
    rl.add_argument("--reward", choices=("corr", "dist", "both"))
    rl.add_argument("--rl-variant", choices=("reinforce", "paper"))
    rl.add_argument("--rl-samples", type=int, help="sequences sampled per sample (default 4)")
    rl.add_argument("--rl-baseline", choices=("mean", "greedy", "none"))
    p.set_defaults(func=run)


def config_from_args(args: argparse.Namespace):
    from tvr.trance.train.config import TrainConfig

    base = TrainConfig.load(args.config).to_dict() if args.config else {}
    for name in _FIELDS:
        value = getattr(args, name, None)
        if value is not None:
            base[name] = int(value) if name == "devices" and str(value).isdigit() else value
    if args.image_size:
        width, height = args.image_size
        base["image_size"] = [height, width]  # TrainConfig keeps (height, width)
    if args.synthetic_sizes:
        base["synthetic_sizes"] = args.synthetic_sizes
    if args.reinforce:
        base["reinforce"] = True
    if args.no_resume:
        base["resume"] = False
    if args.channels_last:
        base["channels_last"] = True
    try:
        return TrainConfig.from_dict(base)
    except (TypeError, ValueError) as err:
        raise UserError(str(err)) from None


def run(args: argparse.Namespace) -> int:
    try:
        from tvr.trance.train.run import train
    except ImportError as err:
        raise UserError(
            f"training needs the train extra (pip install 'tvr[train]'): {err}"
        ) from None
    config = config_from_args(args)
    if (
        config.reinforce
        and not config.init_checkpoint
        and not (config.run_dir / "checkpoints" / "last.ckpt").exists()
    ):
        raise UserError("--reinforce fine-tunes a trained model: give --init-checkpoint")
    try:
        run_dir = train(config)
    except ValueError as err:
        raise UserError(str(err)) from None
    print(f"run folder: {run_dir}")
    print(f"predictions: {run_dir / 'predictions.jsonl'}")
    return 0
