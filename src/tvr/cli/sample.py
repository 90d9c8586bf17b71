"""`tvr sample`: make a balanced symbolic TRANCE sample set (in shards, in parallel, resumable)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tvr.cli._common import positive_int
from tvr.core.errors import UserError
from tvr.trance.choices import BALANCE_SCOPES
from tvr.trance.world.vocab import SETTINGS


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "sample",
        help="make balanced symbolic TRANCE samples (no images)",
        description="Sample initial scenes and reference transformations with balanced sampling "
        "(Algorithm 1, tolerance 0.1), checking every rule with the simulator. Writes "
        "OUT/samples.jsonl, OUT/config.json, OUT/balance.json and OUT/shards/. A rerun with the "
        "same options resumes: finished shards are kept.",
    )
    p.add_argument("--out", required=True, type=Path, help="output folder")
    p.add_argument(
        "--num", type=positive_int, default=1000, help="number of samples (default 1000)"
    )
    p.add_argument(
        "--setting",
        choices=SETTINGS,
        default="event",
        help="basic: one step per sample; event and view: 1..4 steps (default event)",
    )
    p.add_argument(
        "--seed", type=int, default=0, help="seed; with the shard index it fixes every sample"
    )
    p.add_argument(
        "--shard-size",
        type=positive_int,
        default=500,
        help="samples per shard: the unit of resume (default 500)",
    )
    p.add_argument(
        "--balance-scope",
        choices=BALANCE_SCOPES,
        default="global",
        help="global (default, the paper's): each shard continues the balance counts of the "
        "earlier shards, so shards are sampled one after another (--workers is not used); "
        "shard: every shard is balanced on its own and shards run in parallel (--workers), "
        "but their imbalances add up over many shards",
    )
    p.add_argument(
        "--workers",
        type=positive_int,
        default=1,
        help="parallel processes, with --balance-scope shard only (default 1)",
    )
    p.add_argument(
        "--config",
        type=Path,
        help="JSON file with sampler options (min_visible, max_visible, min_steps, max_steps, "
        "attributes, tolerance, occlusion, ...); see docs/formats.md",
    )
    p.add_argument(
        "--no-occlusion",
        action="store_true",
        help="skip the occlusion rules B1 and B3 (faster, not like the release)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tvr.trance.sampling.jobs import GenerateConfig, generate
    from tvr.trance.sampling.sampler import SamplerConfig

    options = {}
    if args.config:
        try:
            options = json.loads(args.config.read_text())
        except (OSError, json.JSONDecodeError) as err:
            raise UserError(f"{args.config}: cannot read sampler options: {err}") from None
        if not isinstance(options, dict):
            raise UserError(f"{args.config}: expected a JSON object of sampler options")
    if args.no_occlusion:
        options["occlusion"] = False
    where = f"--config {args.config}" if args.config else "options"
    sampler = SamplerConfig.from_dict(options, where)
    config = GenerateConfig.for_setting(
        args.setting,
        num=args.num,
        seed=args.seed,
        shard_size=args.shard_size,
        sampler=sampler,
        balance_scope=args.balance_scope,
    )
    if args.workers > 1 and config.balance_scope == "global":
        print(
            "note: --workers is not used with --balance-scope global (the shards are sampled "
            "one after another); --balance-scope shard samples them in parallel",
            file=sys.stderr,
        )
    path = generate(config, args.out, workers=args.workers, progress=not args.quiet)
    print(f"wrote {config.num} samples to {path}")
    return 0
