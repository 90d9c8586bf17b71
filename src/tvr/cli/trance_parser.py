"""`tvr trance parser train|predict`: the TRANCE scene parser (the solver's perception)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from tvr.cli._common import (
    add_data_option,
    add_file_overwrite_option,
    add_run_options,
    needs_extra,
    non_negative_int,
    positive_float,
    positive_int,
    print_result,
)

_TRAIN_FIELDS = (
    "data", "train_split", "val_split", "limit", "width", "min_pixels", "sigma", "flip",
    "augment_look", "batch_size", "lr", "weight_decay", "epochs", "max_minutes", "seed", "num_workers", "accelerator",
    "devices", "precision", "output_dir", "run_name", "log_every_n_steps",
)  # fmt: skip


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "parser",
        help="the scene parser: objects, attributes and grid positions from TRANCE images",
        description="The solver's perception (docs/solver.md): a small CenterNet-style network "
        "that finds every object in a 160x120 (or 320x240) TRANCE image and names its size, "
        "colour, material, shape and grid position. Trained on `tvr generate` images with labels "
        "from the scene JSON and the raster renderer's masks.",
    )
    sub = p.add_subparsers(dest="parser_command", metavar="SUBCOMMAND", required=True)

    t = sub.add_parser("train", help="train a scene parser on a `tvr generate` dataset",
                       description="Train the scene parser on the train split's images (all four "
                       "of each sample) and score it on the val split each epoch; a rerun of the "
                       "same options resumes. Writes OUTPUT_DIR/RUN_NAME/ (config.json, "
                       "metrics.csv, checkpoints/, eval/VAL/parser_eval.json).")  # fmt: skip
    add_data_option(t, "a `tvr generate` dataset folder")
    t.add_argument("--train-split", help="split trained on (default train)")
    t.add_argument("--val-split", help="split scored each epoch (default val)")
    t.add_argument("--limit", type=positive_int, help="train on the first N samples")
    t.add_argument("--width", type=positive_int, help="network channels after the stem (24)")
    t.add_argument("--min-pixels", type=non_negative_int,
                   help="objects showing fewer pixels of 320x240 are not targets (20)")  # fmt: skip
    t.add_argument("--sigma", type=positive_float, help="centre Gaussian width in cells (1.0)")
    t.add_argument("--no-flip", dest="flip", action="store_false", default=None,
                   help="do not mirror training images")  # fmt: skip
    t.add_argument("--augment-look", type=float, metavar="STRENGTH",
                   help="randomise the training images' look (light, sheen, colour, blur, "
                   "noise) at this strength, 0-2 (default 0: off; 1: the full ranges)")  # fmt: skip
    t.add_argument("--batch-size", type=positive_int, help="images per batch (32)")
    t.add_argument("--lr", type=positive_float, help="peak learning rate (2e-3)")
    t.add_argument("--weight-decay", type=float, help="AdamW weight decay (1e-4)")
    t.add_argument("--epochs", type=positive_int, help="default 8")
    add_run_options(t, "runs/trance", "scene-parser")
    t.add_argument("--quiet", action="store_true", help="no epoch lines")
    t.set_defaults(func=run_train)

    q = sub.add_parser(
        "predict",
        help="parse a split's images and score the parses (attribute accuracy, position error, "
        "missed and extra objects)",
        description="Parse every image of a split with a trained scene parser; score the "
        "parses against the split's scenes (per attribute, position error in grid units, missed "
        "and extra objects; per image and per number of objects), written to RUN/eval/"
        "DATA-SPLIT[-first-N]/parser_eval.json (with --checkpoint: beside it); with --out, the "
        "parses too "
        "(JSONL, a row per image).",
    )
    model = q.add_mutually_exclusive_group(required=True)
    model.add_argument("--run", type=Path, help="a `tvr trance parser train` run folder")
    model.add_argument("--checkpoint", type=Path, help="one checkpoint (.ckpt)")
    add_data_option(q, "a `tvr generate` dataset folder")
    q.add_argument("--split", default="test", help="the split (default test)")
    q.add_argument("--limit", type=positive_int, help="the first N samples")
    q.add_argument("--out", type=Path, help="also write the parses to this JSONL file")
    add_file_overwrite_option(q, "parses")
    q.add_argument("--json", action="store_true", help="print the scores as JSON")
    q.add_argument("--quiet", action="store_true", help="no progress bar")
    q.set_defaults(func=run_predict)


def run_train(args: argparse.Namespace) -> int:
    with needs_extra("the scene parser needs the train extra"):
        import torch

        from tvr.trance.perception.config import SceneParserConfig
        from tvr.trance.perception.train import train_scene_parser
    if args.threads:
        torch.set_num_threads(args.threads)
    values = {n: getattr(args, n) for n in _TRAIN_FIELDS if getattr(args, n, None) is not None}
    values = {n: str(v) if isinstance(v, Path) else v for n, v in values.items()}
    config = SceneParserConfig(resume=not args.no_resume, **values)
    run_dir = train_scene_parser(config, epoch_lines=not args.quiet)
    print(f"scene parser run: {run_dir} (scores: {run_dir}/eval/{config.val_split}/"
          "parser_eval.json)")  # fmt: skip
    return 0


def _load(args: argparse.Namespace) -> Any:
    with needs_extra("the scene parser needs the train extra"):
        from tvr.trance.perception.predict import SceneParser
    return SceneParser.load(args.run or args.checkpoint)


def run_predict(args: argparse.Namespace) -> int:
    from tvr.core.jsonl import write_json, write_jsonl
    from tvr.core.progress import step_bar
    from tvr.trance.perception.predict import parse_rows, score_split

    parser = _load(args)
    if args.out:
        with step_bar(None, "parse", "sample", not args.quiet) as bar:
            n = write_jsonl(args.out, parse_rows(parser, args.data, args.split, args.limit,
                                                 bar.update))  # fmt: skip
        print(f"wrote {n} image parses to {args.out}", file=sys.stderr if args.json else sys.stdout)
    with step_bar(None, "score", "sample", not args.quiet) as bar:
        scores = score_split(parser, args.data, args.split, args.limit, bar.update)
    name = f"{Path(args.data).resolve().name}-{args.split}"
    if args.limit:  # a part of the split is scored apart from the whole
        name += f"-first-{args.limit}"
    where = Path(args.run) / "eval" / name if args.run else Path(args.checkpoint).parent / name
    write_json(where / "parser_eval.json", scores)
    return print_result(
        scores, score_lines(scores), args.json, f"scores: {where / 'parser_eval.json'}"
    )


def score_lines(scores: dict[str, Any]) -> list[str]:
    """The scores as a small table: overall, per image (view) and per object count."""
    head = (f"{'':>10} {'objects':>7} {'missed':>6} {'extra':>5} {'size':>6} {'color':>6} "
            f"{'mater.':>6} {'shape':>6} {'all':>6} {'pos err':>7} {'p95':>5}")  # fmt: skip
    lines = [f"{scores['images']} images of {scores['samples']} samples ({scores['split']})", head]

    def row(label: str, s: dict[str, Any]) -> str:
        return (f"{label:>10} {s['objects']:>7} {s['missed']:>6} {s['extra']:>5} "
                f"{s['size_acc']:>6.4f} {s['color_acc']:>6.4f} {s['material_acc']:>6.4f} "
                f"{s['shape_acc']:>6.4f} {s['all_attributes_acc']:>6.4f} "
                f"{s.get('position_error_mean', float('nan')):>7.3f} "
                f"{s.get('position_error_p95', float('nan')):>5.2f}")  # fmt: skip

    lines.append(row("all", scores["all"]))
    lines += [row(v, s) for v, s in scores["view"].items()]
    lines += [row(f"{n} objects", s) for n, s in scores["objects"].items() if s["objects"]]
    return lines
