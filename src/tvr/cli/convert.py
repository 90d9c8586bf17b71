"""`tvr convert`: between tvr's samples.jsonl and the public release's data.jsonl layout."""

from __future__ import annotations

import argparse
from pathlib import Path

from tvr.errors import UserError
from tvr.trance.samples_io import (
    read_release,
    read_samples,
    sample_to_release,
    write_jsonl,
    write_samples,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "convert",
        help="convert between tvr samples and the public release's data.jsonl",
        description="--from-release: read a release data.jsonl (ids become img_{idx:06d}, like its "
        "image names) and write tvr samples. --to-release: write a release-style data.jsonl "
        "(idx = line number; image names img_{idx:06d}-init.C.png, -fin.L/C/R.png).",
    )
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument(
        "--from-release", type=Path, metavar="DATA_JSONL", help="release data.jsonl to read"
    )
    group.add_argument(
        "--to-release", type=Path, metavar="SAMPLES_JSONL", help="tvr samples to export"
    )
    p.add_argument("--out", required=True, type=Path, help="file to write")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.out.exists() and args.out.is_dir():
        raise UserError(f"--out {args.out} is a folder; give a file name")
    if args.from_release:
        n = write_samples(args.out, read_release(args.from_release))
    else:
        samples = read_samples(args.to_release)
        n = write_jsonl(args.out, (sample_to_release(s, i) for i, s in enumerate(samples)))
    print(f"wrote {n} samples to {args.out}")
    return 0
