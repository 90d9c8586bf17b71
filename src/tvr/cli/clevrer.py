"""`tvr clevrer`: the CLEVRER benchmark's commands (generate, report, execute, evaluate, baseline;
train, predict, nsdr and results from `tvr.cli.clevrer_models`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from tvr.clevrer.data.layout import questions_file
from tvr.cli._common import (
    add_data_option,
    add_file_overwrite_option,
    add_overwrite_option,
    non_negative_int,
    positive_int,
    split_shares,
    split_sizes_option,
)
from tvr.cli.clevrer_models import register_models
from tvr.cli.verbs import add_compare_verb, add_evaluate_verb, add_stats_verb


def register(subparsers: argparse._SubParsersAction) -> None:
    cl = subparsers.add_parser(
        "clevrer",
        help="CLEVRER benchmark: score answers, write baseline answers",
        description="CLEVRER (videos of colliding objects; descriptive, explanatory, predictive "
        "and counterfactual questions). Files are in the release's layout. See docs/clevrer.md.",
    )
    sub = cl.add_subparsers(dest="clevrer_command", metavar="SUBCOMMAND", required=True)

    p = sub.add_parser(
        "generate",
        help="make a CLEVRER-style set: physics, events, questions, videos",
        description="Simulate videos of colliding objects (pybullet), their events, causal graphs "
        "and counterfactual runs, ask questions with programs, render the videos (raster by "
        "default, or Cycles) and write everything in the release's layout. Sharded on the job "
        "engine: parallel (--workers, --ray), resumable (a rerun builds what is missing), the same "
        "seed gives the same files.",
    )
    p.add_argument("--out", required=True, type=Path, help="the set's folder")
    p.add_argument("--num", type=positive_int, default=200, help="videos (default 200)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="default 0")
    p.add_argument("--shard-size", type=positive_int, default=100,
                   help="videos per symbolic shard (questions are balanced per shard; default 100)")
    p.add_argument("--backend", choices=("raster", "cycles", "none"), default="raster",
                   help="renderer (default raster); none: the symbolic files only")
    p.add_argument("--preset", default="default", help="renderer preset (preview, default, paper)")
    p.add_argument("--split-sizes", type=split_sizes_option,
                   default={"train": 0.5, "val": 0.25, "test": 0.25},
                   metavar="train=N,val=N,test=N",
                   help="sizes of the splits, in index order: video counts that add up to --num, "
                   "or shares that add up to 1 (default train=0.5,val=0.25,test=0.25)")
    p.add_argument("--no-dynamics", action="store_true",
                   help="skip the ground-truth dynamics files (about 0.5 MB a video)")
    p.add_argument("--no-masks", action="store_true", help="skip the per-frame mask files")
    p.add_argument("--workers", type=positive_int, default=1, help="worker processes (default 1)")
    p.add_argument("--ray", help="run the shards on Ray: local, auto or a cluster address")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=generate_command)

    p = sub.add_parser(
        "report",
        help="question-type counts, answer balance, event timelines and sample frames of a set",
        description="Report on a CLEVRER set (generated or the release): question types against "
        "the release's shares, answers per descriptive sub-type, choices per question, events "
        "per video, and for the first --videos videos an events timeline, a contact sheet of "
        "frames at the events and a GIF.",
    )
    p.add_argument("--data", required=True, type=Path, help="the set's folder")
    p.add_argument("--out", required=True, type=Path, help="the report's folder")
    p.add_argument("--videos", type=non_negative_int, default=4,
                   help="videos with timelines and frames (default 4)")
    p.add_argument("--no-gif", action="store_true", help="skip the GIFs")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    add_overwrite_option(p, "a report")
    p.set_defaults(func=report_command)

    p = sub.add_parser(
        "execute",
        help="answer questions by running their programs on dynamics files (the executor)",
        description="Run each question's program (and each choice's) on the video's dynamics in "
        "the official predicted-dynamics layout (DYNAMICS/sim_XXXXX.json): the ground truth a "
        "generated set holds in dynamics/ (the oracle), or a dynamics model's predictions. "
        "Writes the answers in the submission format that `tvr clevrer evaluate` scores.",
    )
    add_data_option(p, "question file with programs, or a set's folder (its --split)")
    p.add_argument("--split", default="test", help="train, val or test (default test)")
    p.add_argument("--dynamics", required=True, type=Path, help="folder of sim_XXXXX.json files")
    p.add_argument("--out", required=True, type=Path, help="answer file to write")
    add_file_overwrite_option(p, "answers")
    p.add_argument("--collisions", choices=("given", "proposed"), default="given",
                   help="collisions as the files list them (default) or proposed from the motion "
                   "as the released executor's no-event mode does")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=execute_command)

    add_evaluate_verb(sub, "clevrer")

    p = sub.add_parser(
        "baseline",
        help="write the answers of a language-only baseline (random or frequent)",
        description="Answer every question of a question file without looking at the videos, "
        "as the paper's Q-type baselines do, and write the answers in the submission format. "
        "random: a uniform answer of the question's sub-type, each option correct or wrong "
        "with probability 1/2. frequent: the most frequent answer of the --train questions of "
        "the same sub-type or type.",
    )
    p.add_argument("kind", choices=("random", "frequent"), metavar="KIND",
                   help="random or frequent")
    add_data_option(p, "question file to answer, or a set's folder (its --split)")
    p.add_argument("--split", default="test", help="train, val or test (default test)")
    p.add_argument("--train", type=Path, help="training question file (for frequent)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed of random")
    p.add_argument("--out", required=True, type=Path, help="answer file to write")
    add_file_overwrite_option(p, "answers")
    p.set_defaults(func=baseline_command)

    register_models(sub)
    add_compare_verb(sub, "clevrer")
    add_stats_verb(sub, "clevrer")


def baseline_command(args: argparse.Namespace) -> int:
    from tvr.clevrer.data.questions import read_questions
    from tvr.clevrer.data.submission import write_submission
    from tvr.clevrer.eval.baselines import frequent_answers, random_answers
    from tvr.core.errors import UserError

    questions = read_questions(questions_file(args.data, args.split))
    if args.kind == "random":
        answers = random_answers(questions, args.seed)
    else:
        if args.train is None:
            raise UserError("frequent needs --train (the questions to count answers in)")
        answers = frequent_answers(read_questions(args.train), questions)
    n = write_submission(args.out, answers)
    print(f"wrote {args.kind} answers for {n} videos to {args.out}")
    return 0


def generate_command(args: argparse.Namespace) -> int:
    from tvr.clevrer.generate.config import GenerateConfig
    from tvr.clevrer.generate.job import generate

    splits = split_shares(args.split_sizes, args.num)
    config = GenerateConfig(
        num=args.num, seed=args.seed, shard_size=args.shard_size, splits=splits,
        backend=args.backend, preset=args.preset, dynamics=not args.no_dynamics,
        masks=not args.no_masks,
    ).validate()  # fmt: skip
    files = generate(config, args.out, workers=args.workers, ray=args.ray, progress=not args.quiet)
    for split, path in files.items():
        print(f"{split}: {path}")
    print(f"wrote {config.num} videos to {args.out}")
    return 0


def report_command(args: argparse.Namespace) -> int:
    from tvr.core.extras import require_extra

    require_extra("clevrer", "tvr clevrer report", "av", "PIL")  # videos, and drawing the report
    from tvr.clevrer.report.writer import write_report

    path = write_report(args.data, args.out, videos=args.videos, gif=not args.no_gif,
                        progress=not args.quiet)  # fmt: skip
    print(f"wrote {path}")
    return 0


def execute_command(args: argparse.Namespace) -> int:
    from tvr.clevrer.data.cache import cached_questions
    from tvr.clevrer.data.questions import read_questions
    from tvr.clevrer.data.submission import write_submission
    from tvr.clevrer.eval.execute import answer_questions
    from tvr.core.errors import UserError

    if not args.dynamics.is_dir():
        raise UserError(f"--dynamics {args.dynamics}: no such folder")
    questions = cached_questions(questions_file(args.data, args.split), read_questions)
    report = answer_questions(questions, args.dynamics, args.collisions, not args.quiet)
    write_submission(args.out, report.videos)
    print(f"answered {report.answered} questions of {len(report.videos)} videos "
          f"({report.errors} program errors) to {args.out}")  # fmt: skip
    if report.missing_dynamics:
        shown = ", ".join(str(i) for i in report.missing_dynamics[:10])
        more = "..." if len(report.missing_dynamics) > 10 else ""
        print(f"no dynamics file for {len(report.missing_dynamics)} videos (scene {shown}{more}): "
              "their questions are unanswered")  # fmt: skip
    return 0
