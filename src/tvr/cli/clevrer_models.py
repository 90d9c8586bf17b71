"""`tvr clevrer train|predict|nsdr|results`: CLEVRER's models, the NS-DR chain and the tables.

Reads options and calls the library (`tvr.clevrer.models`, `tvr.clevrer.nsdr`,
`tvr.clevrer.results`); `tvr.cli.clevrer` adds these sub-commands to `tvr clevrer`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tvr.cli._common import (
    add_file_overwrite_option,
    add_run_options,
    devices_option,
    positive_float,
    positive_int,
    size_option,
)
from tvr.core.errors import UserError


def _programs(text: str) -> int | None:
    """--parser-programs: a count, or all."""
    if text.strip().lower() == "all":
        return None
    return positive_int(text)


def _common_run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", required=True, help="a CLEVRER set (generated, or the release)")
    p.add_argument("--train-split", help="question file trained on (default train)")
    p.add_argument("--val-split", help="question file scored each epoch (default val)")
    p.add_argument("--epochs", type=positive_int)
    p.add_argument("--lr", type=positive_float)
    add_run_options(p, "runs/clevrer", "the model's name")
    _progress_options(p)


#: flags shared by every model -> config field
_COMMON_FIELDS = (
    "data",
    "train_split",
    "val_split",
    "epochs",
    "max_minutes",
    "lr",
    "seed",
    "num_workers",
    "accelerator",
    "devices",
    "precision",
    "output_dir",
    "run_name",
    "log_every_n_steps",
)


def _parser_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--parser-programs",
        type=_programs,
        dest="programs",
        default=argparse.SUPPRESS,
        help="train on N programs (the paper's 1000: N descriptive questions, N "
        "multiple-choice questions, 4N choices) or all (default 1000)",
    )
    p.add_argument("--val-size", type=positive_int, help="held-out texts scored per epoch (2000)")
    p.add_argument("--batch-size", type=positive_int, help="default 64 (the paper's)")
    p.add_argument("--embed-dim", type=positive_int, help="default 300")
    p.add_argument("--hidden", type=positive_int, help="LSTM units (default 256)")
    p.add_argument("--layers", type=positive_int, help="LSTM layers (default 2)")
    p.add_argument("--dropout", type=float)
    p.add_argument("--max-length", type=positive_int, help="most program tokens (default 64)")


def _baseline_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--frames", type=positive_int, help="frames per video (default 8)")
    p.add_argument("--image-size", dest="frame_size", type=size_option,
                   help="WIDTHxHEIGHT of the frames (default 96x64)")  # fmt: skip
    p.add_argument(
        "--cnn", choices=("resnet18", "resnet50", "small"), help="frame CNN (default small)"
    )
    p.add_argument(
        "--cnn-weights",
        metavar="FILE",
        help="torchvision ImageNet weights for the ResNet, a local state-dict file (never "
        "downloaded; default: random weights)",
    )
    p.add_argument(
        "--freeze-cnn",
        action="store_true",
        default=None,
        help="keep the loaded ResNet fixed, as the paper's pool5 features are",
    )
    p.add_argument("--frame-features", type=positive_int, help="per-frame width (default 64)")
    p.add_argument("--embed-dim", type=positive_int, help="default 300")
    p.add_argument("--hidden", type=positive_int, help="LSTM units (default 256)")
    p.add_argument("--dropout", type=float)
    p.add_argument("--batch-videos", type=positive_int, help="videos per batch (default 8)")
    p.add_argument("--weight-decay", type=float)
    p.add_argument("--frame-cache", help="frame cache folder (default OUTPUT_DIR/frame-cache)")
    p.add_argument("--cache-workers", type=positive_int, help="processes decoding frames")


def _fields(args: argparse.Namespace, names: tuple[str, ...]) -> dict[str, Any]:
    return {n: getattr(args, n) for n in names if getattr(args, n, None) is not None}


def _parser_config(args: argparse.Namespace) -> Any:
    from tvr.clevrer.models.parser.config import ParserConfig

    extra = ("val_size", "batch_size", "embed_dim", "hidden", "layers", "dropout", "max_length")
    values = _fields(args, _COMMON_FIELDS + extra)
    if hasattr(args, "programs"):  # given: a count, or None for all
        values["programs"] = args.programs
    return ParserConfig(resume=not args.no_resume, **values)


def _baseline_config(model: str) -> Callable[[argparse.Namespace], Any]:
    def make(args: argparse.Namespace) -> Any:
        from tvr.clevrer.models.baselines.config import BaselineConfig

        extra = (
            "frames",
            "cnn",
            "cnn_weights",
            "freeze_cnn",
            "frame_features",
            "embed_dim",
            "hidden",
            "dropout",
            "batch_videos",
            "weight_decay",
            "frame_cache",
            "cache_workers",
        )
        values = _fields(args, _COMMON_FIELDS + extra)
        if args.frame_size is not None:
            values["frame_width"], values["frame_height"] = args.frame_size
        return BaselineConfig(model=model, resume=not args.no_resume, **values)

    return make


def _train_parser(config: Any, bar: bool) -> Path:
    from tvr.clevrer.models.parser.run import train_parser

    return train_parser(config, progress_bar=bar)


def _train_baseline(config: Any, bar: bool) -> Path:
    from tvr.clevrer.models.baselines.run import train_baseline

    return train_baseline(config, progress_bar=bar)


def _optional_int(text: str) -> int | None:
    return None if text.strip().lower() in ("all", "none") else positive_int(text)


def _optional_float(text: str) -> float | None:
    return None if text.strip().lower() == "none" else float(text)


def _height_width(text: str) -> tuple[int, int]:
    width, height = size_option(text)
    return height, width


#: a config field's annotation -> how its option reads a value (fields of other types get none)
_FIELD_TYPES: dict[str, Callable[[str], Any]] = {
    "int": int,
    "float": float,
    "str": str,
    "str | None": str,
    "int | None": _optional_int,
    "float | None": _optional_float,
    "int | str": devices_option,
    "tuple[int, int] | None": _height_width,
}
#: fields every trainable has under another flag (or none)
_SPECIAL_FIELDS = {"data_root", "resume", "threads"}


#: config fields whose flag is not their name (docs/cli.md's grammar)
_FLAG_OF = {"num_workers": "--workers"}


def _progress_options(p: argparse.ArgumentParser) -> None:
    """--quiet (no progress bar; by default Lightning's bar shows beside the epoch lines)."""
    p.add_argument("--quiet", action="store_true", help="no progress bar (the epoch lines stay)")


def _dataclass_options(config_class: type) -> Callable[[argparse.ArgumentParser], None]:
    """Options for the fields of another part's run config (detector, dynamics): one flag per
    field of a known type, named after it (data_root is --data, resume is --no-resume, a size is
    WIDTHxHEIGHT, a count that may be None takes `all`); defaults stay the config's."""

    def options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--data", required=True, help="a CLEVRER set (generated, or the release)")
        p.add_argument("--no-resume", action="store_true", help="start over even if a run is there")
        p.add_argument("--threads", type=positive_int, help="torch CPU threads (default: torch's)")
        _progress_options(p)
        for f in dataclasses.fields(config_class):
            if f.name in _SPECIAL_FIELDS:
                continue
            flag = _FLAG_OF.get(f.name, "--" + f.name.replace("_", "-"))
            if f.type == "bool":
                p.add_argument(
                    flag,
                    action=argparse.BooleanOptionalAction,
                    default=None,
                    help=f"default {'on' if f.default else 'off'}",
                )
            elif f.type in _FIELD_TYPES:
                shown = "WIDTHxHEIGHT, " if f.type.startswith("tuple") else ""
                p.add_argument(
                    flag,
                    dest=f.name,
                    type=_FIELD_TYPES[f.type],
                    default=argparse.SUPPRESS,
                    help=f"{shown}default {f.default if f.default is not dataclasses.MISSING else '-'}",
                )

    return options


def _dataclass_config(config_class: type) -> Callable[[argparse.Namespace], Any]:
    """The run config of another part from the options of `_dataclass_options`."""

    def make(args: argparse.Namespace) -> Any:
        values: dict[str, Any] = {"data_root": args.data, "resume": not args.no_resume}
        if args.threads is not None:
            values["threads"] = args.threads
        for f in dataclasses.fields(config_class):
            if f.name in _SPECIAL_FIELDS or not hasattr(args, f.name):
                continue
            value = getattr(args, f.name)
            if f.type == "bool" and value is None:
                continue
            values[f.name] = value
        return config_class(**values)

    return make


def _train_detector(config: Any, bar: bool) -> Path:
    from tvr.clevrer.models.perception import train_detector

    return train_detector(config.validate(), progress_bar=bar)


def _train_dynamics(config: Any, bar: bool) -> Path:
    from tvr.clevrer.models.dynamics import train_dynamics

    return train_dynamics(config.validate(), progress_bar=bar)


@dataclass(frozen=True)
class Trainable:
    """A model of `tvr clevrer train`: its help, options, config and training function."""

    help: str
    options: Callable[[argparse.ArgumentParser], None]
    config: Callable[[argparse.Namespace], Any]
    train: Callable[[Any, bool], Path]


TRAINABLE: dict[str, Trainable] = {
    "parser": Trainable(
        "NS-DR's question parser (seq2seq: BiLSTM encoder, attention LSTM decoder)",
        _parser_options,
        _parser_config,
        _train_parser,
    ),
    "lstm": Trainable(
        "Table 2's LSTM: the question alone",
        _baseline_options,
        _baseline_config("lstm"),
        _train_baseline,
    ),
    "cnn-lstm": Trainable(
        "Table 2's CNN+LSTM: video frames and the question",
        _baseline_options,
        _baseline_config("cnn-lstm"),
        _train_baseline,
    ),
}


def _other_parts() -> dict[str, Trainable]:
    """The frame parser and the dynamics predictor, where their packages are installed."""
    parts: dict[str, Trainable] = {}
    try:
        from tvr.clevrer.models.perception.config import DetectorConfig

        parts["detector"] = Trainable(
            "NS-DR's video frame parser: a detector with masks and the attribute classifier",
            _dataclass_options(DetectorConfig),
            _dataclass_config(DetectorConfig),
            _train_detector,
        )
    except ImportError:
        pass
    try:
        from tvr.clevrer.models.dynamics.config import DynamicsConfig

        parts["dynamics"] = Trainable(
            "NS-DR's dynamics predictor: a PropNet over object states",
            _dataclass_options(DynamicsConfig),
            _dataclass_config(DynamicsConfig),
            _train_dynamics,
        )
    except ImportError:
        pass
    return parts


def register_models(sub: argparse._SubParsersAction) -> None:
    """Add train, predict, nsdr and results to `tvr clevrer`'s sub-commands."""
    for add in (_register_train, _register_predict, _register_nsdr, _register_results):
        add(sub)


def _register_train(sub: argparse._SubParsersAction) -> None:
    """`tvr clevrer train MODEL`: one sub-command a model."""
    p = sub.add_parser(
        "train",
        help="train a CLEVRER model: the question parser or a Table 2 baseline",
        description="Train with PyTorch Lightning in a run folder (OUTPUT_DIR/RUN_NAME): "
        "config.json, metrics.csv (one row per epoch), checkpoints/best.ckpt and last.ckpt, and "
        "the best checkpoint's predictions on the validation split (predictions/, eval/). Running "
        "it again on the same folder resumes a killed run; a folder of another config is refused.",
    )
    models = p.add_subparsers(dest="model", metavar="MODEL", required=True)
    for name, t in TRAINABLE.items():
        m = models.add_parser(name, help=t.help, description=t.help)
        _common_run_options(m)
        t.options(m)
        m.set_defaults(func=train_command, trainable=t)
    for name, t in _other_parts().items():
        m = models.add_parser(name, help=t.help, description=t.help)
        t.options(m)
        m.set_defaults(func=train_command, trainable=t)


def _register_predict(sub: argparse._SubParsersAction) -> None:
    """`tvr clevrer predict`."""
    p = sub.add_parser(
        "predict",
        help="a trained run's predictions on a split: parsed programs, or answers to submit",
        description="With a parser run: the split's question file with parsed programs "
        "(RUN/predictions/SPLIT.json) and the exact match (RUN/eval/SPLIT/exact_match.json). With "
        "a baseline run: answers in the challenge's submission format (RUN/predictions/SPLIT.json), "
        "scored into RUN/eval/SPLIT/ when the questions have answers (`tvr clevrer evaluate`). "
        "With a detector run: the split's frames scored as on validation (mAP, attribute "
        "accuracy; RUN/eval/SPLIT/detector_eval.json). With a dynamics run: each video rolled out "
        "from its ground-truth observation, in the official layout (RUN/predictions/SPLIT/), and "
        "scored (position error, collisions; RUN/eval/SPLIT/dynamics_eval.json). On another "
        "set than the run's (--data), SPLIT becomes SET-SPLIT (SET: the set's folder name), so "
        "the run's own predictions stay.",
    )
    p.add_argument("--run", required=True, type=Path, help="a run folder of `tvr clevrer train`")
    p.add_argument(
        "--data", help="the set (default: the run's); another set's go to SET-SPLIT under the run"
    )
    p.add_argument("--split", default="test", help="default test")
    p.add_argument("--checkpoint", choices=("best", "last"), default="best")
    p.add_argument(
        "--limit", type=positive_int, help="the split's first N videos only (detector, dynamics)"
    )
    p.add_argument("--threads", type=positive_int, help="torch CPU threads")
    p.add_argument("--out", type=Path,
                   help="also write the answers (a question-answering run) or the parses (a "
                   "parser run) to this file; they are always written into RUN/predictions/")  # fmt: skip
    add_file_overwrite_option(p, "predictions")
    p.set_defaults(func=predict_command)


def _register_nsdr(sub: argparse._SubParsersAction) -> None:
    """`tvr clevrer nsdr`."""
    p = sub.add_parser(
        "nsdr",
        help="NS-DR: parsed programs run on the perceived and predicted scene",
        description="Answer a split's questions as NS-DR does: the programs (ground truth or the "
        "parser's), the objects and their motion (ground truth or the frame parser's), and their "
        "future and counterfactual motion and collisions (ground truth or the dynamics "
        "predictor's), run by the executor. Each learned part can be replaced by ground truth, so "
        "a table shows what it costs; with all three ground truth the answers are the executor's "
        "(100% on a generated set). Writes OUT/config.json, OUT/questions.json (the programs "
        "run), OUT/dynamics/ (the scene each video was answered on), OUT/answers.json (submission "
        "format) and OUT/summary.json, summary.md.",
    )
    p.add_argument("--data", required=True, help="a generated CLEVRER set")
    p.add_argument("--split", default="test", help="default test")
    p.add_argument("--out", required=True, type=Path, help="the NS-DR folder")
    for part, what in (
        ("programs", "a parser run (--parser)"),
        ("perception", "a detector run (--detector)"),
        ("dynamics", "a dynamics run (--dynamics-run)"),
    ):
        p.add_argument(
            f"--{part}",
            choices=("gt", "model"),
            default="gt",
            help=f"ground truth (default) or the model of {what}",
        )
    p.add_argument("--parser", help="parser run folder or checkpoint (--programs model)")
    p.add_argument("--detector", help="detector run folder (--perception model)")
    p.add_argument("--dynamics-run", help="dynamics run folder (--dynamics model)")
    p.add_argument(
        "--collisions",
        choices=("given", "proposed"),
        default="given",
        help="collisions as the dynamics give them, or proposed from the motion as NS-DR (NE) does",
    )
    p.add_argument("--limit", type=positive_int, help="the split's first N videos only")
    p.add_argument(
        "--workers", type=positive_int, default=1, help="processes building the scenes (default 1)"
    )
    p.add_argument("--threads", type=positive_int, help="torch CPU threads")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=nsdr_command)


def _register_results(sub: argparse._SubParsersAction) -> None:
    """`tvr clevrer results`."""
    p = sub.add_parser(
        "results",
        help="Table 2, Table 3, the NS-DR ablation and the parser's exact match, beside the paper",
        description="Each RUN is an evaluation folder (`tvr clevrer evaluate --out`, an NS-DR "
        "folder), a baseline run or a parser run (scored on --split by `tvr clevrer predict`), "
        "optionally LABEL=PATH (labels random, frequent, lstm, cnn+lstm name the paper's rows). "
        "Writes NAME.md/.csv/.json and results.md to --out and prints the Markdown.",
    )
    p.add_argument("runs", nargs="+", metavar="RUN", help="[LABEL=]PATH")
    p.add_argument("--out", required=True, type=Path, help="folder for the tables")
    p.add_argument("--split", default="test", help="the split runs were scored on (default test)")
    p.add_argument(
        "--compare-paper",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="the paper's rows beside ours (default on)",
    )
    p.set_defaults(func=results_command)


def _threads(args: argparse.Namespace) -> None:
    if getattr(args, "threads", None):
        import torch

        torch.set_num_threads(args.threads)


def train_command(args: argparse.Namespace) -> int:
    t = args.trainable
    config = t.config(args)
    _threads(args)
    run_dir = t.train(config, not args.quiet)
    print(f"run folder: {run_dir}")
    return 0


def _run_config(run: Path) -> dict[str, Any]:
    path = run / "config.json"
    if not path.is_file():
        raise UserError(f"--run {run}: no config.json (not a run of `tvr clevrer train`)")
    try:
        return json.loads(path.read_text())
    except ValueError as err:
        raise UserError(f"{path}: not JSON ({err})") from None


def _output_name(args: argparse.Namespace, own_data: str | None) -> str:
    """Where predict writes under RUN/predictions and RUN/eval: the split's name, or SET-SPLIT when
    --data names another set than the run's, so the run's own split is not overwritten."""
    if args.data is None or own_data is None:
        return args.split
    if Path(args.data).resolve() == Path(own_data).resolve():
        return args.split
    return f"{Path(args.data).resolve().name}-{args.split}"


def predict_command(args: argparse.Namespace) -> int:
    _threads(args)
    config = _run_config(args.run)
    data = args.data or config.get("data")
    checkpoint = args.run / "checkpoints" / f"{args.checkpoint}.ckpt"
    if not checkpoint.is_file():
        raise UserError(f"--run {args.run}: no checkpoints/{checkpoint.name}")
    if "data_root" in config:  # the frame parser's or the dynamics predictor's run
        if args.out is not None:
            raise UserError("--out is for a question-answering or parser run; a detector or "
                            f"dynamics run writes its scores and rollouts into {args.run}")  # fmt: skip
        name = _output_name(args, config["data_root"])
        return _predict_part(args, config, args.data or config["data_root"], checkpoint, name)
    name = _output_name(args, config.get("data"))
    if "max_length" in config and "model" not in config:
        from tvr.clevrer.models.parser.run import write_parses

        scores = write_parses(checkpoint, data, args.split, args.run, name)
        print(f"wrote {args.run}/predictions/{name}.json")
        _copy_out(args, args.run / "predictions" / f"{name}.json")
        if scores:
            print(
                f"exact program match: {100 * scores['all']['accuracy']:.1f}% of "
                f"{scores['all']['total']} texts, whole questions "
                f"{100 * scores['questions']['accuracy']:.1f}%"
            )
        return 0
    from tvr.clevrer.models.baselines.run import write_answers

    path = write_answers(checkpoint, data, args.split, args.run, name=name)
    print(f"wrote {path}")
    _copy_out(args, Path(path))
    summary = args.run / "eval" / name / "summary.md"
    if summary.is_file():
        print(summary.read_text().strip().strip("`").strip())
    return 0


def _copy_out(args: argparse.Namespace, path: Path) -> None:
    """--out of `clevrer predict`: the run's predictions file, also at the path the user named."""
    if args.out is not None:
        from tvr.core.jsonl import write_file_bytes

        write_file_bytes(args.out, path.read_bytes())
        print(f"wrote {args.out}")


def _predict_part(
    args: argparse.Namespace, config: dict[str, Any], data: str, checkpoint: Path, name: str
) -> int:
    """A detector run's scores on a split's frames, or a dynamics run's rollouts and scores."""
    if not Path(data).is_dir():
        raise UserError(f"--data {data}: no such folder (give the set with --data)")
    if "detector" in config:
        from tvr.clevrer.models.perception import score_detector_split

        path, s = score_detector_split(args.run, checkpoint, data, args.split, args.limit, name)
        print(f"wrote {path}")
        print(
            f"{int(s['frames'])} frames, {int(s['objects'])} objects: mask AP {s['segm_ap']:.3f}, "
            f"box AP {s['bbox_ap']:.3f}, precision {s['precision']:.3f}, recall {s['recall']:.3f}, "
            f"attributes {s['attributes_acc']:.3f}"
        )
        return 0
    from tvr.clevrer.models.dynamics import predict_dynamics_split

    path, scores = predict_dynamics_split(args.run, checkpoint, data, args.split, args.limit, name)
    print(f"wrote {args.run}/predictions/{name}/ and {path}")
    for kind, e in scores["position_error_px"].items():
        steps = ", ".join(f"{x:.1f}" for x in e["per_step"][:3])
        print(
            f"{kind} position error: mean {e['mean']:.2f} px over the rollout (steps 1-3: {steps})"
        )
    for kind, c in scores["collisions"].items():
        print(f"{kind} collisions: precision {c['precision']:.3f}, recall {c['recall']:.3f}")
    return 0


def nsdr_command(args: argparse.Namespace) -> int:
    from tvr.clevrer.nsdr import NsdrConfig, run_nsdr

    _threads(args)
    config = NsdrConfig(
        data=args.data,
        split=args.split,
        programs=args.programs,
        perception=args.perception,
        dynamics=args.dynamics,
        parser=args.parser,
        detector=args.detector,
        dynamics_run=args.dynamics_run,
        collisions=args.collisions,
        limit=args.limit,
    )
    result = run_nsdr(config, args.out, workers=args.workers, progress=not args.quiet)
    print("\n".join(result.lines))
    print(f"wrote {args.out}")
    return 0


def results_command(args: argparse.Namespace) -> int:
    from tvr.clevrer.results import make_results

    markdown, files = make_results(args.runs, args.out, args.split, args.compare_paper)
    print(markdown)
    print(f"wrote {len(files)} files to {args.out}")
    return 0
