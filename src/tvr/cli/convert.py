"""`tvr convert`: tvr's samples (or a dataset split) to the public release's layout, and back.

A samples.jsonl converts to and from the release's data.jsonl; a dataset folder of `tvr generate`
converts between a store split and a release folder with its images.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tvr.cli._common import add_file_overwrite_option, size_option
from tvr.core.errors import UserError
from tvr.core.jsonl import write_jsonl
from tvr.trance.world.vocab import SETTINGS


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "convert",
        help="convert between tvr samples and the public release's data.jsonl",
        description="--from-release: read a release data.jsonl (lines written by tvr get back their "
        "ids, seeds, shards and order-sensitive flags; other ids become img_{idx:06d}, like their "
        "image names) and write tvr samples. --to-release: write a release-style data.jsonl "
        "(idx = line number; image names img_{idx:06d}-init.C.png, -fin.L/C/R.png). With "
        "folders: --to-release DATASET_DIR --split S --out FOLDER exports a split of a `tvr "
        "generate` dataset with its PNGs (in FOLDER/image/); --from-release FOLDER --out DATASET_DIR --split S "
        "imports a release folder (data.jsonl + PNGs) into a dataset store.",
    )
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument(
        "--from-release", type=Path, metavar="DATA_JSONL", help="release data.jsonl to read"
    )
    group.add_argument(
        "--to-release", type=Path, metavar="SAMPLES_JSONL", help="tvr samples to export"
    )
    p.add_argument("--out", required=True, type=Path, help="file (or folder, with images) to write")
    add_file_overwrite_option(p, "samples")
    p.add_argument("--split", default=None, help="with folders: the store split (default test "
                   "on export, train on import)")
    p.add_argument("--setting", default="event", choices=SETTINGS,
                   help="on import: the setting of the new store (default event)")
    p.add_argument("--shard-size", type=int, default=100, help="on import: samples per shard")
    p.add_argument("--small-size", type=size_option, default=(160, 120),
                   help="on import: the training copy, WIDTHxHEIGHT (default 160x120)")
    p.add_argument("--quiet", action="store_true", help="no progress bar (folders)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tvr.trance.data.files import read_samples, write_samples
    from tvr.trance.data.release import read_release, sample_to_release

    if (args.from_release and args.from_release.is_dir()) or (
        args.to_release and args.to_release.is_dir()
    ):
        return run_folders(args)
    if args.out.exists() and args.out.is_dir():
        raise UserError(f"--out {args.out} is a folder; give a file name")
    if args.from_release:
        n = write_samples(args.out, read_release(args.from_release))
    else:
        samples = read_samples(args.to_release)
        n = write_jsonl(args.out, (sample_to_release(s, i) for i, s in enumerate(samples)))
    print(f"wrote {n} samples to {args.out}")
    return 0


def run_folders(args: argparse.Namespace) -> int:
    from tvr.core.jsonl import check_output_folder
    from tvr.core.progress import DoneTotalBar, step_bar
    from tvr.trance.data.store import open_dataset
    from tvr.trance.generate.release_images import export_release, import_release

    if args.to_release:
        split = args.split or "test"
        sp = open_dataset(args.to_release).split(split)
        check_output_folder(args.out)  # a bad --out is one line, before the bar
        with step_bar(len(sp), "exporting", "sample", not args.quiet) as bar:
            export_release(sp, args.out, progress=bar.update)
        print(f"wrote {len(sp)} samples of {split} with their images to {args.out}")
        return 0
    if args.shard_size < 1:
        raise UserError(f"option 'shard_size' (--shard-size): at least 1, got {args.shard_size}")
    split = args.split or "train"
    with DoneTotalBar("importing", "sample", not args.quiet) as bar:
        ds = import_release(
            args.from_release, args.out, split, args.setting, args.shard_size, args.small_size,
            bar,
        )  # fmt: skip
    print(f"imported {len(ds.split(split))} samples into {args.out} (split {split})")
    return 0
