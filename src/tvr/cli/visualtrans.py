"""`tvr visualtrans`: describe a VisualTrans file (stats), score model replies (evaluate), write
a model-free baseline's predictions (baseline), compare two evaluations (compare), build a new
set from videos (build) and the testbed that needs no video from outside (testbed)."""

from __future__ import annotations

import argparse
from pathlib import Path

from tvr.cli._common import (
    add_data_option,
    add_file_overwrite_option,
    add_lenient_option,
    add_overwrite_option,
    non_negative_int,
    print_result,
)
from tvr.cli.verbs import add_compare_verb

DATA_HELP = "VisualTrans.json, or the folder holding it"


def register(subparsers: argparse._SubParsersAction) -> None:
    vt = subparsers.add_parser(
        "visualtrans",
        help="VisualTrans benchmark: describe a data file, score model replies, baselines",
        description="The VisualTrans benchmark (real manipulation scenes; 6 subtasks in 3 "
        "dimensions). See docs/visualtrans.md.",
    )
    sub = vt.add_subparsers(dest="visualtrans_command", metavar="SUBCOMMAND", required=True)

    p = sub.add_parser(
        "stats",
        help="validate a data file; count items per subtask, scenario and answer format",
        description="Load and validate a VisualTrans JSON file (errors name the item index and "
        "field), then print the counts per subtask, dimension, scenario and answer format, the "
        "duplicate groups and the warnings. With --images, also the missing images (exit "
        "status 1 if any).",
    )
    add_data_option(p, DATA_HELP)
    _stats_options(p)

    p = sub.add_parser(
        "evaluate",
        help="score replies (official or normalized rules): the Table 2 row, per subtask, ...",
        description="Extract each reply's final answer and compare it with the label. "
        "--mode official reproduces the published scorer (comparable with the paper's Table 2); "
        "--mode normalized also accepts case and trailing-punctuation differences, number words "
        "and 'and' in sets. Items without a reply, failed requests and replies without a final "
        "answer count as wrong and are listed. Prints the Table 2 row; with --out also writes "
        "summary.json, summary.md, accuracy.png and detail.jsonl (one line per item, what "
        "`tvr visualtrans compare` reads) there.",
    )
    _evaluate_options(p)

    p = sub.add_parser(
        "baseline",
        help="write the predictions of a model-free baseline (random or frequent)",
        description="Answer every distinct item from its question alone and write the replies "
        "in the predictions format `tvr visualtrans evaluate` reads. random: a uniformly "
        "random answer among those the question offers (one of its option letters, a subset "
        "of its object list, or one of the file's count labels), seeded. frequent: the most "
        "frequent label of the item's subtask and answer format in the file (VisualTrans has no "
        "training split, so this prior is measured on the file it answers). The paper reports "
        "no model-free baseline; see docs/visualtrans.md.",
    )
    p.add_argument("kind", choices=("random", "frequent", "oracle"), metavar="KIND",
                   help="random, frequent, or oracle (the labels themselves: a built set's "
                   "check that scoring reads every answer)")  # fmt: skip
    add_data_option(p, DATA_HELP)
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed of random (default 0)")
    p.add_argument("--out", required=True, type=Path, help="predictions file to write (JSONL)")
    add_file_overwrite_option(p, "predictions")
    p.set_defaults(func=baseline_command)

    add_compare_verb(sub, "visualtrans")
    register_build(sub)


def _stats_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--images", type=Path, help="also check that every image exists here")
    p.add_argument("--json", action="store_true", help="print the statistics as JSON")
    p.add_argument("--families", action="store_true",
                   help="also match every question to the `tvr visualtrans build` question "
                   "family that would write it: coverage, families no item matches, items no "
                   "family matches with the reason")  # fmt: skip
    p.set_defaults(func=stats_command)


def _evaluate_options(p: argparse.ArgumentParser) -> None:
    add_data_option(p, DATA_HELP, resolve="tvr.visualtrans.data.dataset:data_file")
    p.add_argument("--predictions", required=True, type=Path,
                   help="replies: the results JSONL of `tvr vlm run`, or a baseline's "
                   "predictions (the official runner's output is read too)")  # fmt: skip
    p.add_argument("--mode", choices=("official", "normalized"), default="official",
                   help="default official")  # fmt: skip
    p.add_argument(
        "--out",
        type=Path,
        help="also write summary.json, summary.md, accuracy.png, detail.jsonl here",
    )
    p.add_argument(
        "--unique",
        action="store_true",
        help="score only the first item of each duplicate group (default: every item, as the "
        "published scorer does)",
    )
    add_lenient_option(p, "predictions line (torn, not JSON, no string id)")
    add_overwrite_option(p, "an evaluation")
    p.add_argument("--json", action="store_true", help="print summary.json instead of the table")
    p.set_defaults(func=evaluate_command)


def stats_command(args: argparse.Namespace) -> int:
    from tvr.visualtrans.data.dataset import load_dataset

    dataset = load_dataset(args.data)
    summary = dataset.summary()
    if args.images is not None:
        missing = dataset.missing_images(args.images)
        summary["missing_images"] = [{"index": i, "image": p} for i, p in missing]
    lines = [f"{summary['file']}: {summary['items']} items, {summary['unique_items']} distinct"]
    for title, key in (
        ("subtask", "by_subtask"),
        ("dimension", "by_dimension"),
        ("scenario", "by_scene"),
        ("answer format", "by_format"),
    ):
        lines.append(f"per {title}:")
        lines += [f"  {name:32s} {n:5d}" for name, n in summary[key].items()]
    lines.append(f"items with a mask: {summary['with_mask']}")
    lines.append(f"duplicate groups (item indices): {summary['duplicate_groups'] or 'none'}")
    lines += [f"warning: {warning}" for warning in summary["warnings"]]
    if getattr(args, "families", False):
        from tvr.visualtrans.build.questions import family_coverage

        cov = summary["families"] = family_coverage(dataset)
        lines.append(f"question families: {cov['matched']} of {cov['items']} items matched "
                     f"({100 * (cov['coverage'] or 0):.1f}%)")  # fmt: skip
        lines += [f"  {name:32s} {n:5d}" for name, n in cov["per_family"].items()]
        lines.append(f"families no item matches: {', '.join(cov['families_unmatched']) or 'none'}")
        lines += [f"  unmatched item {u['index']} ({u['task_type']}, {u['scene']}): {u['reason']}"
                  for u in cov["unmatched_items"]]  # fmt: skip
    if args.images is not None:
        missing = summary["missing_images"]
        lines.append(f"missing images: {len(missing)}")
        lines += [f"  item {m['index']}: {m['image']}" for m in missing[:20]]
    print_result(summary, lines, args.json)
    return 1 if summary.get("missing_images") else 0


def evaluate_command(args: argparse.Namespace) -> int:
    from tvr.core.overlap import require_overlap
    from tvr.visualtrans.data.dataset import load_dataset
    from tvr.visualtrans.eval.report import table2_row, write_report
    from tvr.visualtrans.eval.scoring import load_replies, score_dataset

    dataset = load_dataset(args.data)
    records, unreadable = load_replies(args.predictions, lenient=args.lenient)
    require_overlap(args.predictions, records, (it.id for it in dataset.items), dataset.path,
                    "VisualTrans item")  # fmt: skip
    board = score_dataset(dataset, records, args.mode, unique_only=args.unique)
    extra = {"data": str(dataset.path), "predictions": str(args.predictions),
             "unreadable_result_lines": unreadable}  # fmt: skip
    if args.out is not None:
        summary = write_report(board, args.out, extra=extra)
    else:
        summary = {**extra, **board.summary()}
    header, row = table2_row(summary)
    width = max(len(h) for h in header)
    counts = summary["status_counts"]
    known = {it.id for it in dataset.items}
    unknown = sum(1 for i in records if i not in known)
    lines = [f"without an answer (counted wrong): {counts['no_answer']} no final answer, "
             f"{counts['failed']} failed requests, {counts['missing']} missing; ignored: "
             f"{unknown} predictions of unknown ids"]  # fmt: skip
    if unreadable:
        lines.append(f"unreadable predictions lines (--lenient; their items count as missing): "
                     f"{len(unreadable)}, lines {', '.join(map(str, unreadable[:10]))}"
                     + (" ..." if len(unreadable) > 10 else ""))  # fmt: skip
    lines.append(f"{args.mode} scoring of {summary['overall']['items']} items (accuracy %):")
    lines += [f"  {h:<{width}}  {v:>6}" for h, v in zip(header, row, strict=True)]
    wrote = None
    if args.out is not None:
        chart = ", accuracy.png" if (args.out / "accuracy.png").is_file() else ""
        wrote = f"wrote {args.out}/summary.json, summary.md{chart}, detail.jsonl"
    return print_result(summary, lines, args.json, wrote)


def baseline_command(args: argparse.Namespace) -> int:
    from tvr.core.jsonl import write_jsonl
    from tvr.visualtrans.data.dataset import load_dataset
    from tvr.visualtrans.eval.baselines import baseline_predictions

    lines = baseline_predictions(load_dataset(args.data), args.kind, args.seed)
    n = write_jsonl(args.out, lines)
    print(f"wrote {args.kind} predictions for {n} distinct items to {args.out}")
    return 0


# --- build: the construction pipeline; testbed -------------------------------------------------
BUILD_OPTIONS = {
    # option dest -> BuildConfig field (None: the CLI's default is the config's)
    "input": "input", "task": "task", "scenes": "scenes",
    "frames_per_episode": "frames_per_episode", "image_size": "image_size",
    "jpeg_quality": "jpeg_quality", "annotator": "annotator", "truth": "truth",
    "error_rate": "error_rate", "malformed_rate": "malformed_rate",
    "parse_retries": "parse_retries", "metadata": "metadata", "detector": "detector",
    "seed": "seed", "questions_per_family": "questions_per_family",
    "low_count_keep": "low_count_keep",
}  # fmt: skip


def _rate(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1], got {text}")
    return value


def _build_options(p: argparse.ArgumentParser) -> None:
    from tvr.cli._common import positive_int

    g = p.add_argument_group("episodes and keyframes")
    g.add_argument("--input", type=str, help="episodes: a folder of task folders (EgoDex: "
                   "TASK/N.mp4 beside N.hdf5), or a plain folder of videos with --task")
    g.add_argument("--task", help="the scene of a plain folder of videos")
    g.add_argument("--scenes", type=lambda t: tuple(t.split(",")), help="comma-separated task "
                   "folders to take (default the release's 12 scenes)")
    g.add_argument("--frames-per-episode", type=positive_int,
                   help="keyframes per episode, start and end included (default 3)")
    g.add_argument("--image-size", type=positive_int, help="keyframes' short side (default 480)")
    g.add_argument("--jpeg-quality", type=positive_int, help="default 95")
    g = p.add_argument_group("the vision-language model (filter, annotate)")
    g.add_argument("--base-url", help="OpenAI-compatible endpoint (or TVR_VLM_BASE_URL)")
    g.add_argument("--model", help="model name (or TVR_VLM_MODEL)")
    g.add_argument("--api-key", help="API key (better: TVR_VLM_API_KEY or OPENAI_API_KEY)")
    g.add_argument("--annotator", choices=("endpoint", "scripted"),
                   help="endpoint (default) or scripted: the testbed's annotator on loopback")
    g.add_argument("--truth", help="the testbed's truth.jsonl (scripted annotator)")
    g.add_argument("--error-rate", type=_rate, help="scripted: share of episodes with wrong "
                   "metadata (default 0)")
    g.add_argument("--malformed-rate", type=_rate, help="scripted: share of replies that are "
                   "not JSON (default 0)")
    g.add_argument("--parse-retries", type=non_negative_int,
                   help="ask an invalid reply again this often (default 2)")
    g.add_argument("--concurrency", type=positive_int, default=4, help="requests at once (default 4)")
    g.add_argument("--metadata", help="human metadata (JSON lines) for some or all episodes")
    g.add_argument("--detector", help="a local Grounding DINO folder for object crops "
                   "(never downloaded; without it no crops)")
    g = p.add_argument_group("questions")
    g.add_argument("--seed", type=non_negative_int, help="default 0")
    g.add_argument("--questions-per-family", type=non_negative_int,
                   help="at most this many per family (default 0: all)")
    g.add_argument("--low-count-keep", type=_rate, help="share of counting questions with an "
                   "answer of 0 or 1 kept (default 0.3)")
    p.add_argument("--workers", type=positive_int, default=1, help="frames stage processes")


def register_build(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "build",
        help="build a VisualTrans set from manipulation videos (frames, filter, annotate, "
        "questions, export)",
        description="The paper's construction pipeline as a resumable job: keyframes of each "
        "episode, filtering and metadata by a vision-language model (any OpenAI-compatible "
        "endpoint), rule-based questions of 17 families, export in the release's format. "
        "Each stage's output is kept in OUT/STAGE/; a finished stage is not run again; "
        "settings are saved in OUT/config.json (a rerun may leave them out; other values are "
        "refused). See docs/visualtrans.md.",
    )
    p.add_argument("--out", required=True, type=Path, help="the build folder")
    p.add_argument("--stage", choices=("frames", "filter", "annotate", "questions", "export",
                                       "all"), default="all", help="default all")  # fmt: skip
    _build_options(p)
    p.set_defaults(func=build_command)

    p = sub.add_parser(
        "testbed",
        help="render manipulation episodes with known truth and build them with the scripted "
        "annotator",
        description="Render short episodes of four scenes (blocks stacked in layers, books "
        "reordered in a row, food moved between a plate and a basket, beads grouped by "
        "colour) as H.264 videos in EgoDex's layout (OUT/episodes/TASK/N.mp4 + N.hdf5) with "
        "their truth (OUT/truth.jsonl); then, unless --no-build, build them into OUT/build with "
        "the scripted annotator on loopback (no model needed).",
    )
    p.add_argument("--out", required=True, type=Path, help="the testbed folder")
    p.add_argument("--episodes-per-scene", type=non_negative_int, default=6, help="default 6")
    p.add_argument("--seed", type=non_negative_int, default=0, help="default 0")
    p.add_argument("--error-rate", type=_rate, default=0.0, help="scripted annotator's share of "
                   "episodes with wrong metadata (default 0)")
    p.add_argument("--malformed-rate", type=_rate, default=0.0, help="its share of replies that "
                   "are not JSON (default 0)")
    p.add_argument("--no-build", action="store_true", help="only render the episodes")
    p.set_defaults(func=testbed_command)


def build_config_from(args: argparse.Namespace, out: Path):
    """The BuildConfig of the options given, the saved config (OUT/config.json) filling the
    ones left out."""
    import json

    from tvr.visualtrans.build.config import BuildConfig

    saved: dict = {}
    cfg = out / "config.json"
    if cfg.is_file():
        try:
            saved = json.loads(cfg.read_text(encoding="utf-8"))
        except ValueError:
            saved = {}
        saved.pop("format", None)
    given = {field: getattr(args, dest) for dest, field in BUILD_OPTIONS.items()
             if getattr(args, dest, None) is not None}  # fmt: skip
    if "input" in given:
        given["input"] = str(Path(given["input"]).resolve())
    for name in ("truth", "metadata", "detector"):
        if name in given:
            given[name] = str(Path(given[name]).resolve())
    merged = {**saved, **given}
    return BuildConfig.from_dict(merged) if merged.get("input") else BuildConfig(**merged).validate()


def build_command(args: argparse.Namespace) -> int:
    from tvr.core.extras import require_extra
    from tvr.visualtrans.build import run_build
    from tvr.visualtrans.build.config import STAGES

    require_extra("visualtrans", "tvr visualtrans build", "pydantic", "av", "httpx")
    config = build_config_from(args, args.out)
    stages = STAGES if args.stage == "all" else (args.stage,)
    run_build(config, args.out, stages, base_url=args.base_url, api_key=args.api_key,
              model=args.model, workers=args.workers, concurrency=args.concurrency)  # fmt: skip
    return 0


def testbed_command(args: argparse.Namespace) -> int:
    from tvr.core.extras import require_extra
    from tvr.core.jsonl import prepare_output_folder
    from tvr.visualtrans.build import run_build
    from tvr.visualtrans.build.config import BuildConfig
    from tvr.visualtrans.testbed.world import make_testbed

    require_extra("visualtrans", "tvr visualtrans testbed", "pydantic", "av", "httpx",
                  "moderngl")  # fmt: skip
    out = prepare_output_folder(args.out)
    if (out / "truth.jsonl").is_file():
        print(f"episodes: already rendered ({out / 'truth.jsonl'})")
    else:
        summary = make_testbed(out, args.episodes_per_scene, args.seed)
        print(f"episodes: {summary['episodes']} rendered into {out / 'episodes'} "
              f"({summary['unusable']} unusable by design), truth in {out / 'truth.jsonl'}")  # fmt: skip
    if args.no_build:
        return 0
    config = BuildConfig(input=str((out / "episodes").resolve()), image_size=240,
                         annotator="scripted", truth=str((out / "truth.jsonl").resolve()),
                         error_rate=args.error_rate, malformed_rate=args.malformed_rate,
                         seed=args.seed)  # fmt: skip
    run_build(config, out / "build")
    from tvr.visualtrans.build.check import check_against_truth

    check = check_against_truth(out / "build")
    print(f"answers against the truth: {check['wrong']} wrong of {check['items']} questions "
          f"({100 * (check['wrong_share'] or 0):.1f}%; scripted error rate {args.error_rate})")
    print(f"the built set: {out / 'build' / 'export'} (tvr visualtrans stats --data "
          f"{out / 'build' / 'export'})")  # fmt: skip
    return 0
