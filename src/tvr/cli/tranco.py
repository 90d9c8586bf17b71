"""`tvr tranco`: TRANCO's commands (evaluate, compare, baseline, build, testbed, stats)."""

from __future__ import annotations

import argparse
from pathlib import Path

from tvr.cli._common import (
    add_data_option,
    add_file_overwrite_option,
    non_negative_int,
    positive_int,
    require,
    size_option,
    split_counts_option,
    split_sizes_option,
)
from tvr.cli.tranco_models import register_models
from tvr.cli.verbs import add_compare_verb, add_evaluate_verb, add_stats_verb
from tvr.tranco.data.layout import samples_file

SETTING_HELP = (
    "candidate sets: tiny (each sample's listed candidates, @100 in the paper), full (every "
    "clip of the samples file) or auto (tiny if every sample lists candidates; the default)"
)


def register(subparsers: argparse._SubParsersAction) -> None:
    tr = subparsers.add_parser(
        "tranco",
        help="TRANCO benchmark: score predicted clip sequences, write baseline predictions",
        description="TRANCO (the ordered step clips of a real process between its initial and "
        "final images, chosen among candidate clips never seen in training). Files are JSON "
        "lines; see docs/tranco.md.",
    )
    sub = tr.add_subparsers(dest="tranco_command", metavar="SUBCOMMAND", required=True)

    add_evaluate_verb(sub, "tranco")
    add_compare_verb(sub, "tranco")

    p = sub.add_parser(
        "baseline",
        help="write the predictions of the paper's random baseline",
        description="random: for each sample, n steps uniform on --min-steps..--max-steps (the "
        "paper: 2 to 7), then n distinct candidates in a random order. Seeded.",
    )
    p.add_argument("kind", choices=("random",), metavar="KIND",
                   help="random (the paper's baseline)")
    add_data_option(p, "a samples file (JSON lines), or a dataset folder (its --split)")
    p.add_argument("--split", default="test", help="the split of a dataset folder (default test)")
    p.add_argument("--candidates", choices=("auto", "tiny", "full"), default="auto",
                   help=SETTING_HELP)  # fmt: skip
    p.add_argument("--seed", type=non_negative_int, default=0, help="default 0")
    p.add_argument("--min-steps", type=positive_int, default=2, help="default 2 (the paper's)")
    p.add_argument("--max-steps", type=positive_int, default=7, help="default 7 (the paper's)")
    p.add_argument("--out", required=True, type=Path, help="predictions file to write")
    add_file_overwrite_option(p, "predictions")
    p.set_defaults(func=baseline_command)

    register_models(sub)  # train, predict (tvr.cli.tranco_models)

    register_build(sub)
    register_testbed(sub)
    add_stats_verb(sub, "tranco")


def _split_weights(args: argparse.Namespace, default: tuple) -> tuple:
    """`tranco build`'s split proportions: --split-sizes, or `default`."""
    if args.split_sizes:
        return tuple(args.split_sizes.get(k, 0.0) for k in ("train", "val", "test"))
    return default


def baseline_command(args: argparse.Namespace) -> int:
    from tvr.tranco.data.formats import read_samples, write_predictions
    from tvr.tranco.eval.baselines import random_predictions

    _check_steps(args)
    samples = read_samples(samples_file(args.data, args.split))
    setting, predictions = random_predictions(
        samples, args.seed, args.candidates, args.min_steps, args.max_steps
    )
    count = write_predictions(args.out, predictions)
    print(f"wrote {count} predictions of the random baseline ({setting} candidates) to {args.out}")
    return 0


# --- the dataset: build from COIN, the TRANCE-clips testbed, statistics ------------------------
def register_build(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "build",
        help="build a TRANCO dataset from COIN.json and local video files",
        description="COIN videos with 2-7 steps become samples: the initial and final state "
        "images, and each step clip as --frames-per-clip frames (seeded sparse temporal "
        "sampling), JPEGs scaled to --short-side; a seeded split by video, stratified by the "
        "number of steps, in Table 2's proportions; stored tiny candidate sets for val/test. A "
        "missing or unreadable video is listed in dataset.json and skipped; nothing is "
        "downloaded. Sharded and resumable: a rerun with the same options builds what is "
        "missing. See docs/tranco.md.",
    )
    p.add_argument("--coin", required=True, type=Path, help="COIN.json")
    p.add_argument("--videos", required=True, type=Path, help="the folder of local video files")
    p.add_argument("--out", required=True, type=Path, help="the dataset folder")
    p.add_argument("--seed", type=non_negative_int, default=0, help="default 0")
    p.add_argument("--min-steps", type=positive_int, default=2, help="default 2 (the paper's)")
    p.add_argument("--max-steps", type=positive_int, default=7, help="default 7 (the paper's)")
    p.add_argument("--frames-per-clip", type=positive_int, default=3, help="default 3")
    p.add_argument("--image-size", type=positive_int, default=256, dest="short_side",
                   metavar="SHORT_SIDE",
                   help="image short side in pixels (default 256)")  # fmt: skip
    p.add_argument("--jpeg-quality", type=positive_int, default=95, help="default 95")
    p.add_argument("--split-sizes", type=split_sizes_option, metavar="train=W,val=W,test=W",
                   help="split proportions (default Table 2's train=8651,val=1024,test=1430)")  # fmt: skip
    p.add_argument("--no-stratify", action="store_true",
                   help="split by the seeded hash alone, not by number of steps")  # fmt: skip
    p.add_argument("--tiny-candidates", type=positive_int, default=100,
                   help="stored candidates per val/test sample (default 100)")  # fmt: skip
    p.add_argument("--shard-size", type=positive_int, default=20, help="videos per shard")
    p.add_argument("--limit", type=positive_int, help="only the first N eligible videos")
    p.add_argument("--workers", type=positive_int, default=1, help="worker processes (default 1)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=build_command)


def build_command(args: argparse.Namespace) -> int:
    from tvr.tranco.data.build import TABLE2_SPLIT, BuildConfig, build_dataset

    config = BuildConfig(
        coin=str(args.coin), videos=str(args.videos), seed=args.seed, min_steps=args.min_steps,
        max_steps=args.max_steps, frames_per_clip=args.frames_per_clip,
        short_side=args.short_side, jpeg_quality=args.jpeg_quality,
        split_weights=_split_weights(args, TABLE2_SPLIT),
        stratify=not args.no_stratify, tiny_candidates=args.tiny_candidates,
        shard_size=args.shard_size, limit=args.limit,
    )  # fmt: skip
    _check_steps(args)
    report = build_dataset(config, args.out, workers=args.workers, progress=not args.quiet)
    print("\n".join(report.lines()))
    return _print_dataset(args.out, report.seconds)


def register_testbed(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "testbed",
        help="render the TRANCE-clips testbed in the TRANCO layout",
        description="TRANCE Event samples (TRANCE's balanced sampler) rendered with the raster "
        "renderer: the initial and final images and one clip per atomic transformation whose "
        "frames show the change happening. Open-world split: for every value one object shape "
        "is held out; training never sees a held-out (value, shape) type, val and test use only "
        "those. Sharded and resumable. See docs/tranco.md.",
    )
    p.add_argument("--out", required=True, type=Path, help="the dataset folder")
    size = p.add_mutually_exclusive_group(required=True)
    size.add_argument("--num", type=positive_int,
                      help="samples in all, split in Table 2's proportions")  # fmt: skip
    size.add_argument("--split-sizes", type=split_counts_option, metavar="train=N,val=N,test=N",
                      help="samples per split")  # fmt: skip
    p.add_argument("--seed", type=non_negative_int, default=0, help="default 0")
    p.add_argument("--min-steps", type=positive_int, default=2, help="default 2 (TRANCO's least)")
    p.add_argument("--max-steps", type=positive_int, default=4, help="default 4 (TRANCE's most)")
    p.add_argument("--frames-per-clip", type=positive_int, default=3, help="default 3")
    p.add_argument("--image-size", type=size_option, default=(160, 120),
                   help="WIDTHxHEIGHT (default 160x120, TRANCE's training size)")  # fmt: skip
    p.add_argument("--frame-times", choices=("sparse", "even"), default="sparse",
                   help="sparse: one seeded time per part of each step (default); even: from "
                   "the state before to the state after")  # fmt: skip
    p.add_argument("--preset", default="default", help="raster quality preset (default, preview)")
    p.add_argument("--tiny-candidates", type=positive_int, default=100,
                   help="stored candidates per val/test sample (default 100)")  # fmt: skip
    p.add_argument("--shard-size", type=positive_int, default=10, help="samples per shard")
    p.add_argument("--jpeg-quality", type=positive_int, default=95, help="default 95")
    p.add_argument("--workers", type=positive_int, default=1, help="worker processes (default 1)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=testbed_command)


def testbed_command(args: argparse.Namespace) -> int:
    from tvr.core.extras import require_modules

    require_modules("moderngl")  # the raster renderer: its extra is said before the job starts
    from tvr.testbeds.clips import ClipsConfig, generate_clips
    from tvr.tranco.data.build import TABLE2_SPLIT, allocate
    from tvr.tranco.data.candidates import tiny_candidates

    if args.split_sizes:
        unknown = sorted(set(args.split_sizes) - {"train", "val", "test"})
        require(not unknown, f"--split-sizes: unknown split {', '.join(unknown)} (train, val, test)")
        sizes = tuple(args.split_sizes.get(k, 0) for k in ("train", "val", "test"))
    else:
        sizes = tuple(allocate(args.num, TABLE2_SPLIT))
    require(sizes[0] >= 1, f"the testbed needs training samples, got sizes {list(sizes)}")
    _check_steps(args)
    width, height = args.image_size
    config = ClipsConfig(
        sizes=sizes, seed=args.seed, min_steps=args.min_steps, max_steps=args.max_steps,
        frames_per_clip=args.frames_per_clip, width=width, height=height,
        frame_times=args.frame_times, preset=args.preset, jpeg_quality=args.jpeg_quality,
        tiny_candidates=args.tiny_candidates, shard_size=args.shard_size,
    )  # fmt: skip
    report = generate_clips(config, args.out, tiny_candidates, args.workers, not args.quiet)
    samples, clips = sum(report.samples.values()), sum(report.clips.values())
    print(", ".join(f"{s} {report.samples[s]} samples / {report.clips[s]} clips"
                    for s in report.samples))  # fmt: skip
    print(f"held-out types (val/test only): {len(report.held_out)} of 96, e.g. "
          f"{', '.join(report.held_out[:3])}")  # fmt: skip
    if report.render_seconds > 0:
        wall, cpu = report.render_seconds, report.render_cpu_seconds
        print(f"worker time over all shards (sampling, rendering, writing): {wall:.1f} s wall, "
              f"{cpu:.1f} s CPU; {samples / wall:.2f} samples/s and {clips / wall:.2f} clips/s "
              f"per worker, {samples / max(cpu, 1e-9):.2f} samples per CPU second")  # fmt: skip
    return _print_dataset(args.out, report.seconds)


def _check_steps(args: argparse.Namespace) -> None:
    """UserError where --min-steps is above --max-steps."""
    require(args.min_steps <= args.max_steps,
            f"--min-steps {args.min_steps} is above --max-steps {args.max_steps}")  # fmt: skip


def _print_dataset(out: Path, seconds: float) -> int:
    """After a build: the dataset's statistics against Table 2, and the time it took."""
    _print_stats(out)
    print(f"wrote {out} in {seconds:.1f} s")
    return 0


def _print_stats(path: Path, check_images: bool = True) -> None:
    from tvr.tranco.data.dataset import open_dataset
    from tvr.tranco.data.stats import dataset_stats, stats_lines

    dataset = open_dataset(path, check_images=check_images)
    print("\n".join(stats_lines(dataset_stats(dataset), f"ours ({dataset.source})")))
