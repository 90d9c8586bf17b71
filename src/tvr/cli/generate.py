"""`tvr generate`: make a TRANCE image dataset (Basic, Event or View) with train/val/test splits."""

from __future__ import annotations

import argparse
from pathlib import Path

from tvr.cli._common import size_option, split_counts_option
from tvr.core.errors import UserError

#: flag -> DatasetConfig field, for the options that map one to one
_FIELDS = (
    "setting", "num", "seed", "shard_size", "backend", "preset", "resize_filter",
    "png_compress_level", "balance_scope",
)  # fmt: skip


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "generate",
        help="make a TRANCE image dataset (sample, render, store; resumable, parallel, Ray)",
        description="Sample balanced TRANCE samples, render init.C, fin.L, fin.C, fin.R of each, "
        "and store them in OUT: full-size PNGs, a 160x120 uint8 copy for training, samples.jsonl "
        "per split, manifests with checksums (docs/datasets.md). Splits: --num N is divided "
        "like the public release (train:val:test = 500k:10k:20k) unless --split-sizes gives "
        "them. Options not given here come from --config (JSON or TOML, any DatasetConfig "
        "field, sampler options in a 'sampler' table); the full config is saved as "
        "OUT/config.json. A rerun with the same options resumes; other options are refused.",
    )
    p.add_argument("--out", type=Path, help="dataset folder")
    p.add_argument("--setting", help="basic (1 step), event (1..4 steps) or view (event + a view)")
    p.add_argument("--num", type=int, help="samples in all, divided into train/val/test")
    p.add_argument("--split-sizes", type=split_counts_option, help="e.g. train=500,val=10,test=20")
    p.add_argument("--config", type=Path, help="JSON or TOML file with the other options")
    p.add_argument("--seed", type=int, help="seed (default 0); split k uses sampler seed 3*seed+k")
    p.add_argument("--shard-size", type=int, help="samples per shard (default 100)")
    p.add_argument("--backend", help="raster (moderngl, default) or cycles (bpy)")
    p.add_argument("--preset", help="preview, default or paper (default: default)")
    p.add_argument("--image-size", type=size_option, help="full-size PNGs, WIDTHxHEIGHT (320x240)")
    p.add_argument("--small-size", type=size_option, help="training copy, WIDTHxHEIGHT (160x120)")
    p.add_argument("--resize-filter", help="box (area, default), lanczos, bilinear, bicubic")
    p.add_argument(
        "--png-compress-level",
        type=int,
        help="zlib level 0..9 (default 3; 6: files 20%% smaller, 2.6 ms more per image)",
    )
    p.add_argument(
        "--balance-scope",
        help="global (default, the paper's): each shard continues the balance counts of the "
        "earlier shards of its split, sampled one after another in this process while the "
        "workers render; shard: every shard balanced on its own (older datasets)",
    )
    p.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    p.add_argument(
        "--ray",
        metavar="auto|ADDRESS|local",
        help="run the shards on Ray: local (start one here with --workers CPUs), auto (the "
        "running cluster) or a cluster address",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument(
        "--verify",
        type=Path,
        metavar="DIR",
        help="instead of generating: check every file of dataset DIR against its manifests",
    )
    p.set_defaults(func=run)


def config_from_args(args: argparse.Namespace):
    """The DatasetConfig of the command line over the config file (UserError naming bad options)."""
    from tvr.trance.generate.config import DatasetConfig, read_config_file

    options = read_config_file(args.config) if args.config else {}
    where = f"--config {args.config}" if args.config else "options"
    for name in _FIELDS:
        value = getattr(args, name, None)
        if value is not None:
            options[name] = value
    if args.split_sizes is not None:
        options["split_sizes"] = args.split_sizes
        options.setdefault("num", None)
        if args.num is None:
            options["num"] = None
    if args.image_size:
        options["image_width"], options["image_height"] = args.image_size
    if args.small_size:
        options["small_width"], options["small_height"] = args.small_size
    return DatasetConfig.from_dict(options, where).resolved()


def run(args: argparse.Namespace) -> int:
    from tvr.trance.data.store import open_dataset

    if args.verify:
        ds = open_dataset(args.verify)
        ds.verify()
        sizes = ", ".join(f"{s} {len(ds.split(s))}" for s in ds.splits)
        print(f"{args.verify}: every file matches its manifest ({ds.setting}: {sizes})")
        return 0
    if args.workers < 1:
        raise UserError(f"option 'workers' (--workers): must be at least 1, got {args.workers}")
    config = config_from_args(args)
    if args.out is None:
        raise UserError("option 'out' (--out): give the dataset folder")
    from tvr.core.extras import require_modules
    from tvr.trance.generate.job import generate_dataset

    if args.ray:
        require_modules("ray")  # said before the job starts (its progress bar, its folder)
    ds = generate_dataset(
        config, args.out, workers=args.workers, ray=args.ray, progress=not args.quiet
    )
    sizes = ", ".join(f"{s} {len(ds.split(s))}" for s in ds.splits)
    print(f"dataset {ds.setting} in {args.out}: {sizes}")
    for s in ds.splits:
        print(f"  {s}: {ds.split(s).samples_path}")
    return 0
