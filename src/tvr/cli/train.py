"""`tvr train`: train a TranceNet model (or fine-tune it with REINFORCE); see docs/models.md."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, NoReturn

from tvr.cli._common import (
    devices_option,
    non_negative_int,
    positive_float,
    positive_int,
    size_option,
    split_counts_option,
)
from tvr.core.errors import UserError
from tvr.core.extras import missing_extra
from tvr.trance.world.vocab import SETTINGS

#: the dataset sources of tvr.trance.train.data, for --help
DATA_SOURCES = {
    "trance": "the image dataset of `tvr generate` (or of `tvr convert --from-release`) at "
    "--data DIR; the source whenever --data is given",
    "synthetic": "small top-down drawings made in memory (sizes: --split-sizes), for tests "
    "and smoke runs only; never used unless asked for by name",
}
#: fields a fine-tune takes from its --init-checkpoint's run unless given: the model's shape
_FROM_CHECKPOINT = ("model", "setting", "image_size", "decoder_form", "duda_form")

#: TrainConfig fields whose option has another name (docs/cli.md): --source, --data, --workers
_OPTION_OF = {"data": "source", "data_root": "data", "num_workers": "workers"}

#: TrainConfig fields set by the option of the same name (or the one `_OPTION_OF` names)
_FIELDS = (
    "model",
    "decoder_form",
    "duda_form",
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
    "log_every_n_steps",
    "reward",
    "rl_variant",
    "rl_samples",
    "rl_baseline",
    "init_checkpoint",
)


def one_line_errors(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Make `parser` report a bad option as one line, `PROG: error: ...`, exit status 2 (as
    `tvr` reports every user error), without argparse's usage block."""

    def error(message: str) -> NoReturn:
        print(f"{parser.prog}: error: {message} (see {parser.prog} --help)", file=sys.stderr)
        raise SystemExit(2)

    parser.error = error  # type: ignore[method-assign]
    return parser


def add_source_options(p: argparse.ArgumentParser, what: str) -> None:
    """--data DIR and --source NAME of `tvr train` and `tvr predict`."""
    p.add_argument("--data", metavar="DIR", help=what)
    p.add_argument(
        "--source",
        choices=tuple(DATA_SOURCES),
        help="the dataset source; "
        + "; ".join(f"{name}: {text}" for name, text in DATA_SOURCES.items()),
    )


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "train",
        help="train a TranceNet model (CNN/ResNet/BCNN/DUDA encoders, GRU/Transformer decoders)",
        description="Train with PyTorch Lightning; the run folder gets config.json, metrics.csv, "
        "tensorboard/, checkpoints/ (best.ckpt by validation Acc, last.ckpt) and predictions.jsonl "
        "for `tvr evaluate`. Running it again on the same run folder resumes from last.ckpt; a "
        "folder of another run (another config) is never written into. Prints one line per "
        "epoch and a progress bar (--quiet: no bar). The data: give --data DIR, or "
        "--source synthetic for the small drawn set of the tests.",
    )
    one_line_errors(p)
    p.add_argument("--config", type=Path, help="config.json of an earlier run; flags override it")
    for add in (_model_options, _data_options, _fit_options, _run_folder_options,
                _reinforce_options):  # fmt: skip
        add(p)
    p.set_defaults(func=run)


def _model_options(p: argparse.ArgumentParser) -> None:
    """The model and its forms."""
    p.add_argument(
        "--model",
        help="e.g. cnn+-g, resnet--t, bcnn-g, duda-g (default: the --init-checkpoint's, else "
        "resnet--g)",
    )
    p.add_argument(
        "--setting", choices=SETTINGS, help="default: the --init-checkpoint's, else event"
    )
    p.add_argument(
        "--decoder-form",
        choices=("original", "tvr"),
        help="the -T decoder: 'original' (the original code's, the default for new runs) or "
        "'tvr' (tvr's earlier form); default: the --init-checkpoint's (docs/models.md)",
    )
    p.add_argument(
        "--duda-form",
        choices=("original", "tvr"),
        help="DUDA's attention: 'original' (on the pooled features, the default for new runs) "
        "or 'tvr'; default: the --init-checkpoint's",
    )


def _data_options(p: argparse.ArgumentParser) -> None:
    """The data: source, sizes, image size, a training subset."""
    add_source_options(p, "the dataset folder (of `tvr generate`) to train on")
    p.add_argument(
        "--split-sizes", type=split_counts_option, help="split sizes of the synthetic source"
    )
    p.add_argument(
        "--image-size", type=size_option, help="WIDTHxHEIGHT fed to the model (default 160x120)"
    )
    p.add_argument(
        "--train-size",
        type=positive_int,
        help="train on a seeded random subset of N training samples (nested across N for one "
        "seed; the journal's training-size curves)",
    )


def _fit_options(p: argparse.ArgumentParser) -> None:
    """How long and how it fits: epochs, time, batches, lr, augmentation, hardware."""
    p.add_argument("--epochs", type=positive_int, help="default 50")
    p.add_argument(
        "--max-minutes",
        type=positive_float,
        help="stop fitting after this many minutes (the lr still drops at half of --epochs); "
        "the best checkpoint so far is predicted",
    )
    p.add_argument(
        "--batch-size", type=positive_int, help="in all, split over the devices (default 128)"
    )
    p.add_argument("--lr", type=positive_float, help="default 1e-3")
    p.add_argument(
        "--lr-drop-epoch", type=non_negative_int, help="lr / 10 from this epoch (default half)"
    )
    p.add_argument(
        "--translate", type=_fraction, help="max random translation, 0 to 1 (default 0.05)"
    )
    p.add_argument("--seed", type=int)
    p.add_argument("--workers", type=non_negative_int)
    p.add_argument("--accelerator", choices=("auto", "cpu", "gpu"))
    p.add_argument("--devices", type=devices_option, help="auto or a number of devices")
    p.add_argument(
        "--precision",
        choices=("auto", "32-true", "bf16-mixed", "16-mixed"),
        help="auto: mixed on GPUs, 32-true on CPUs",
    )
    p.add_argument(
        "--channels-last",
        action="store_true",
        help="NHWC convolutions; with --precision bf16-mixed the fast CPU setting (docs/models.md)",
    )
    p.add_argument(
        "--precise-bn-batches",
        type=non_negative_int,
        help="recompute BatchNorm statistics over N training batches before each validation "
        "(default 0: off, the papers' recipe)",
    )


def _run_folder_options(p: argparse.ArgumentParser) -> None:
    """The run folder: where, its name, what it predicts, resume, logging, the bar."""
    p.add_argument("--output-dir", help="folder of run folders (default runs)")
    p.add_argument(
        "--run-name",
        help="run folder name (default SETTING-MODEL; a REINFORCE fine-tune of RUN/checkpoints/"
        "X.ckpt: RUN-reinforce-REWARD, RUN-reinforce-paper-REWARD for --rl-variant paper)",
    )
    p.add_argument("--predict-split", help="split written to predictions.jsonl (default test)")
    p.add_argument(
        "--no-resume",
        action="store_true",
        help="start this run over even if its folder has a last.ckpt",
    )
    p.add_argument(
        "--log-every-n-steps",
        type=positive_int,
        help="Lightning's logging interval in training steps (TensorBoard; default 50)",
    )
    p.add_argument(
        "--quiet", action="store_true", help="no progress bar (the line per epoch stays)"
    )


def _reinforce_options(p: argparse.ArgumentParser) -> None:
    """REINFORCE fine-tuning of a trained model (Table 4)."""
    rl = p.add_argument_group("REINFORCE fine-tuning (Table 4)")
    rl.add_argument("--reinforce", action="store_true", help="fine-tune with simulator rewards")
    rl.add_argument(
        "--init-checkpoint",
        help="checkpoint of the trained model to start from; its run's model, setting, image "
        "size (and data, if none is given) are this run's unless given",
    )
    rl.add_argument("--reward", choices=("corr", "dist", "both"))
    rl.add_argument("--rl-variant", choices=("reinforce", "paper"))
    rl.add_argument(
        "--rl-samples", type=positive_int, help="sequences sampled per sample (default 4)"
    )
    rl.add_argument("--rl-baseline", choices=("mean", "greedy", "none"))


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"expected a fraction from 0 to below 1, got {value}")
    return value


def _from_checkpoint(base: dict[str, Any]) -> None:
    """Fill what a fine-tune leaves out from its init checkpoint's run: the model's shape
    (`_FROM_CHECKPOINT`) and, when neither --data nor --data-root is given, its data."""
    from tvr.trance.train.checkpoint import checkpoint_config, read_checkpoint

    path = base["init_checkpoint"]
    saved = checkpoint_config(read_checkpoint(path), path).to_dict()
    for name in _FROM_CHECKPOINT:
        if name in saved:
            base.setdefault(name, saved[name])
    if base.get("data") is None and base.get("data_root") is None:
        base["data"], base["data_root"] = saved["data"], saved["data_root"]
        base.setdefault("synthetic_sizes", saved["synthetic_sizes"])


def config_from_args(args: argparse.Namespace):
    from tvr.trance.train.config import TrainConfig

    base: dict[str, Any] = {}
    if args.config:
        try:
            base = TrainConfig.load(args.config).to_dict()
        except (OSError, TypeError, ValueError) as err:
            raise UserError(f"--config {args.config}: not a training config ({err})") from None
    for name in _FIELDS:
        value = getattr(args, _OPTION_OF.get(name, name), None)
        if value is not None:
            base[name] = int(value) if name == "devices" and str(value).isdigit() else value
    if args.image_size:
        width, height = args.image_size
        base["image_size"] = [height, width]  # TrainConfig keeps (height, width)
    if args.split_sizes:
        base["synthetic_sizes"] = args.split_sizes
    if args.reinforce:
        base["reinforce"] = True
    if args.no_resume:
        base["resume"] = False
    if args.channels_last:
        base["channels_last"] = True
    if base.get("init_checkpoint"):
        _from_checkpoint(base)
    if base.get("data") is None and base.get("data_root") is None:
        raise UserError(
            "no training data: give --data DIR (a dataset of `tvr generate`) or, for the "
            "small drawn set of the tests, --source synthetic"
        )
    try:
        return TrainConfig.from_dict(base)
    except (TypeError, ValueError) as err:
        raise UserError(str(err)) from None


def run(args: argparse.Namespace) -> int:
    try:
        from tvr.trance.train.run import train
    except ImportError as err:
        raise missing_extra(err, "training") from None
    config = config_from_args(args)
    if (
        config.reinforce
        and not config.init_checkpoint
        and not (config.run_dir / "checkpoints" / "last.ckpt").exists()
    ):
        raise UserError("--reinforce fine-tunes a trained model: give --init-checkpoint")
    try:
        run_dir = train(config, progress_bar=not args.quiet)
    except ValueError as err:
        raise UserError(" ".join(str(err).split())) from None
    print(f"run folder: {run_dir}")
    print(f"predictions: {run_dir / 'predictions.jsonl'}")
    return 0
