"""`tvr vtt`: the VTT benchmark's commands (stats, evaluate, compare, build, the testbed, ...)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from tvr.cli._common import add_data_option, add_file_overwrite_option, add_overwrite_option
from tvr.cli.verbs import add_compare_verb
from tvr.vtt.data.layout import records_file


def register(subparsers: argparse._SubParsersAction) -> None:
    from tvr.cli._common import add_lenient_option

    vt = subparsers.add_parser(
        "vtt",
        help="VTT (visual transformation telling): check the records, score descriptions",
        description="VTT: describe the N transformations between N+1 state images of an "
        "instructional video. Files are in the release's layout (meta/vtt.jsonl, states/). "
        "See docs/vtt.md.",
    )
    sub = vt.add_subparsers(dest="vtt_command", metavar="SUBCOMMAND", required=True)

    p = sub.add_parser(
        "stats",
        help="validate the released records and print split statistics against Table 1",
        description="Read and validate meta/vtt.jsonl (errors name the file, line and field), "
        "check the state images if --images is given, and print the numbers of Table 1 "
        "(categories, topics, samples, states, transformations, unique descriptions per "
        "source and split) with the paper's beside them.",
    )
    p.add_argument("--data", required=True, type=Path, metavar="PATH",
                   help="a release folder (meta/vtt.jsonl, states/) or its records file")  # fmt: skip
    p.add_argument("--images", type=Path, metavar="DIR",
                   help="the folder of state images ({id}_{N+1}_{i}.jpg) to check")  # fmt: skip
    p.add_argument("--verify-images", action="store_true",
                   help="also decode each state image's header (needs Pillow; slower)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print the statistics as JSON")
    p.set_defaults(func=stats_command)

    p = sub.add_parser(
        "evaluate",
        help="score predicted descriptions with the paper's metrics",
        description='Score a prediction file (JSON lines {"id", "transformations": [N '
        "strings]}) against the records of one split as the paper's evaluation does: each "
        "description against its reference, averaged over descriptions, x100: BLEU-4 (NLTK, "
        "smoothing 7), METEOR, ROUGE-L, CIDEr-D (coco-caption), SPICE (only with a local "
        "CoreNLP) and BERTScore (roberta-large layer 17 rescaled with a local model; otherwise "
        "a small offline model, labelled as not the paper's setting). Missing descriptions are "
        "scored as empty and counted. Prints Table 2's anchors beside ours.",
    )
    add_data_option(p, "a release folder (meta/vtt.jsonl) or its records file",
                    resolve="tvr.vtt.data.layout:records_file")  # fmt: skip
    p.add_argument("--predictions", required=True, type=Path, help="the prediction file")
    p.add_argument("--split", choices=("train", "val", "test"), default="test",
                   help="the split to score (default test)")  # fmt: skip
    p.add_argument("--out", type=Path, help="write summary.json, detail.jsonl and table.md here")
    add_lenient_option(p)
    p.add_argument("--spice-corenlp", type=Path, metavar="DIR",
                   help="a folder with stanford-corenlp-3.6.0.jar and its -models.jar; "
                   "without it SPICE is reported unavailable")  # fmt: skip
    p.add_argument("--bertscore-model", type=Path, metavar="DIR",
                   help="a local roberta-large (the paper's BERTScore); without it the offline "
                   "all-MiniLM-L6-v2, labelled as not the paper's setting")  # fmt: skip
    p.add_argument("--no-bertscore", action="store_true",
                   help="skip BERTScore (reported unavailable)")  # fmt: skip
    p.add_argument("--only-present", action="store_true",
                   help="score only the split's samples that have a line in the predictions "
                   "(the reference cut to them, CIDEr-D's document frequencies too; as Table "
                   "2's Human and multi-turn rows); default: a sample without a line is scored "
                   "as empty descriptions")  # fmt: skip
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("--json", action="store_true", help="print summary.json instead of the table")
    add_overwrite_option(p, "an evaluation")
    p.set_defaults(func=evaluate_command)
    add_compare_verb(sub, "vtt")
    register_build(sub)
    register_testbed(sub)
    register_judge(sub)
    register_ratings(sub)
    register_models(sub)


def stats_command(args: argparse.Namespace) -> int:
    from tvr.vtt.data.records import check_states, read_records
    from tvr.vtt.data.stats import split_statistics, stats_lines

    path = records_file(args.data)
    records = read_records(path)
    checked = None
    if args.images is not None:
        checked = check_states(records, args.images, path, verify=args.verify_images)
    stats = split_statistics(records)
    if args.json:
        print(json.dumps({**stats, "state_images_checked": checked}, indent=2))
        return 0
    print(f"{path}: {len(records)} records, valid")
    if checked is not None:
        print(f"{args.images}: all {checked:,} state images present"
              + (" and readable" if args.verify_images else ""))  # fmt: skip
    print("\n".join(stats_lines(stats)))
    return 0


def evaluate_command(args: argparse.Namespace) -> int:
    from tvr.cli._common import (
        lenient_problems,
        lenient_summary,
        print_lenient_note,
        print_result,
    )
    from tvr.core.errors import UserError
    from tvr.vtt.eval.evaluate import evaluate, write_evaluation
    from tvr.vtt.eval.metrics.suite import MetricOptions

    if args.no_bertscore and args.bertscore_model is not None:
        raise UserError("--no-bertscore and --bertscore-model exclude each other")
    options = MetricOptions(spice_corenlp=args.spice_corenlp,
                            bertscore_model=args.bertscore_model,
                            bertscore=not args.no_bertscore)  # fmt: skip
    if args.out is not None:  # a bad --out fails before the long part, creating nothing
        from tvr.core.jsonl import check_output_folder

        check_output_folder(args.out)
    problems = lenient_problems(args)
    result = evaluate(records_file(args.data), args.predictions, args.split, options, problems,
                      only_present=args.only_present, progress=not args.quiet)  # fmt: skip
    result.summary.update(lenient_summary(problems))
    print_lenient_note(problems)
    if args.out is not None:
        write_evaluation(result, args.out)
    wrote = None if args.out is None else f"wrote {args.out}/summary.json, detail.jsonl, table.md"
    return print_result(result.summary, result.table, args.json, wrote)


# --- build: records and states from COIN / CrossTask and local videos ---------------------------
def register_build(sub: argparse._SubParsersAction) -> None:
    """`tvr vtt build`."""
    from tvr.cli._common import positive_int

    p = sub.add_parser(
        "build",
        help="build VTT records and state images from COIN/CrossTask and local videos",
        description="Read COIN.json and/or a CrossTask release, drop videos with no steps, more "
        "than 12 steps or overlapping steps, extract the N+1 states of each sample with PyAV "
        "(state 0 at the start of step 1, state i at the end of step i; 256 px on the short "
        "side) from the local video files, and write the released layout (meta/vtt.jsonl, "
        "states/) into --out. Missing or broken videos are listed and skipped. Resumable: "
        "rerun the same command to finish a killed build. Nothing is downloaded. "
        "See docs/vtt.md.",
    )
    p.add_argument("--coin", type=Path, metavar="COIN.json", help="COIN's annotation file")
    p.add_argument("--crosstask", type=Path, metavar="DIR",
                   help="CrossTask's release folder (tasks_primary.txt, videos.csv, "
                   "annotations/)")  # fmt: skip
    p.add_argument("--videos", type=Path, action="append", required=True, metavar="DIR",
                   help="a folder of video files named by YouTube id (repeat for more; the "
                   "first folder that has a video wins)")  # fmt: skip
    p.add_argument("--out", type=Path, required=True, help="the output folder")
    p.add_argument("--split-rule", choices=("paper", "source"), default="paper",
                   help="paper: Table 1's proportions within each topic, seeded (default); "
                   "source: COIN's subsets, CrossTask's videos.csv/videos_val.csv as "
                   "train/test")  # fmt: skip
    p.add_argument("--seed", type=int, default=0, help="seed of the paper split (default 0)")
    p.add_argument("--image-size", type=positive_int, default=256, dest="short_side",
                   metavar="SHORT_SIDE",
                   help="state images' short side in pixels (default 256, the paper's)")  # fmt: skip
    p.add_argument("--shard-size", type=positive_int, default=50,
                   help="samples per shard of the job (default 50)")  # fmt: skip
    p.add_argument("--workers", type=positive_int, default=1,
                   help="worker processes (default 1)")  # fmt: skip
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=build_command)


def build_command(args: argparse.Namespace) -> int:
    from tvr.core.errors import UserError
    from tvr.vtt.data.build import RECORDS_FILE, BuildConfig, build, report_lines

    config = BuildConfig(
        coin=None if args.coin is None else str(args.coin.resolve()),
        crosstask=None if args.crosstask is None else str(args.crosstask.resolve()),
        seed=args.seed, split=args.split_rule, short_side=args.short_side,
        shard_size=args.shard_size,
    ).validate()  # fmt: skip
    result = build(config, args.videos, args.out, args.workers, progress=not args.quiet)
    print("\n".join(report_lines(result.report, result.out)))
    if result.records == 0:
        raise UserError(f"{args.out}: no sample was built (no video found or every one broken); "
                        "check --videos")  # fmt: skip
    _print_table1(result.out / RECORDS_FILE)
    return 0


def _print_table1(records_path: Path) -> None:
    from tvr.vtt.data.records import read_records
    from tvr.vtt.data.stats import split_statistics, stats_lines

    print("\n".join(stats_lines(split_statistics(read_records(records_path)))))


# --- testbed: TRANCE Event samples told in words, in VTT's layout ------------------------------
def register_testbed(sub: argparse._SubParsersAction) -> None:
    """`tvr vtt testbed`."""
    from tvr.cli._common import positive_int, size_option

    p = sub.add_parser(
        "testbed",
        help="make the TRANCE text testbed: rendered Event samples described in words",
        description="Sample TRANCE Event samples (1-4 steps), render the N+1 states with the "
        "raster renderer and describe each step from templates with varied phrasing ('the "
        "small red cube turns blue'), in VTT's layout (meta/vtt.jsonl, states/), split with "
        "Table 1's shares. Resumable: rerun the same command to finish a killed run. "
        "See docs/vtt.md.",
    )
    p.add_argument("--out", type=Path, required=True, help="the output folder")
    p.add_argument("--num", type=positive_int, default=60, help="samples (default 60)")
    p.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    p.add_argument("--workers", type=positive_int, default=1,
                   help="worker processes (default 1)")  # fmt: skip
    p.add_argument("--shard-size", type=positive_int, default=20,
                   help="samples per shard of the job (default 20)")  # fmt: skip
    p.add_argument("--max-steps", type=positive_int, default=4,
                   help="steps per sample at most (1-4, default 4)")  # fmt: skip
    p.add_argument("--image-size", type=size_option, default=(320, 240), metavar="WxH",
                   help="state image size (default 320x240, TRANCE's)")  # fmt: skip
    p.add_argument("--preset", choices=("preview", "default"), default="default",
                   help="raster quality preset (default: default)")  # fmt: skip
    p.add_argument("--phrasing", choices=("varied", "fixed"), default="varied",
                   help="varied: seeded templates and synonyms (default); fixed: one wording "
                   "per step")  # fmt: skip
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=testbed_command)


def testbed_command(args: argparse.Namespace) -> int:
    from tvr.core.extras import require_modules

    require_modules("moderngl")  # the raster renderer: its extra is said before the job starts
    from tvr.testbeds.text import (
        RECORDS_FILE,
        TextTestbedConfig,
        make_text_testbed,
        report_lines,
    )

    width, height = args.image_size
    config = TextTestbedConfig(
        num=args.num, seed=args.seed, shard_size=args.shard_size, max_steps=args.max_steps,
        width=width, height=height, preset=args.preset, phrasing=args.phrasing,
    ).validate()  # fmt: skip
    result = make_text_testbed(config, args.out, args.workers, progress=not args.quiet)
    print("\n".join(report_lines(result.report, result.out)))
    if result.built:
        print(f"made {result.built} samples in {result.seconds:.1f} s "
              f"({result.built / result.seconds:.2f} samples/s, {args.workers} worker(s))")  # fmt: skip
    _print_table1(result.out / RECORDS_FILE)
    return 0


# --- the LLM judge and human ratings ---------------------------------------------------------------
def register_judge(sub: argparse._SubParsersAction) -> None:
    """`tvr vtt judge`."""
    from tvr.cli._common import non_negative_int, positive_float, positive_int

    p = sub.add_parser(
        "judge",
        help="rate the logical soundness (1-5) of predictions with an LLM; resumable",
        description="The paper's LLM judge (section 5.5, prompt of Fig. 11): for each model "
        "(--predictions NAME=FILE, repeatable) and sample of the split (or of --subset), send the "
        "predicted descriptions joined by ', ' to an OpenAI-compatible chat endpoint and read "
        "a score 1-5. Writes OUT/ratings.jsonl, summary.json and summary.md (and keeps the "
        "replies in OUT/replies.jsonl: rerun the same command to finish a killed run). With "
        "--ratings (the export of `tvr vtt ratings`), Spearman's rho against people. The "
        "endpoint, model and key come from the options or TVR_VLM_BASE_URL, TVR_VLM_MODEL, "
        "TVR_VLM_API_KEY (prefer the environment for the key).",
    )
    p.add_argument("--data", required=True, type=Path,
                   help="the records: meta/vtt.jsonl or the release folder")  # fmt: skip
    p.add_argument("--predictions", required=True, action="append", metavar="NAME=FILE",
                   help="a prediction file to judge, named (repeat for more models)")  # fmt: skip
    p.add_argument("--out", required=True, type=Path, help="the output folder")
    p.add_argument("--split", choices=("train", "val", "test"), default="test",
                   help="the split (default test)")  # fmt: skip
    p.add_argument("--subset", type=positive_int,
                   help="judge this many samples, one per topic first (as `tvr serve "
                   "--benchmark vtt --subset`); default: the whole split")  # fmt: skip
    p.add_argument("--seed", type=int, default=0, help="the subset's seed (default 0)")
    p.add_argument("--ratings", type=Path,
                   help="human ratings (ratings.jsonl of `tvr vtt ratings`) to compare with")  # fmt: skip
    p.add_argument("--base-url", help="API base URL, e.g. http://127.0.0.1:8000/v1")
    p.add_argument("--model", help="the judge model as the server knows it")
    p.add_argument("--api-key", help="API key (sent only as 'Authorization: Bearer')")
    p.add_argument("--prompt", type=Path, help="prompt template file (default: Fig. 11's)")
    p.add_argument("--concurrency", type=positive_int, default=4,
                   help="requests in flight (default 4)")  # fmt: skip
    p.add_argument("--temperature", type=float, default=0.0,
                   help="sampling temperature (default 0, for repeatable scores)")  # fmt: skip
    p.add_argument("--max-tokens", type=positive_int,
                   help="reply token limit (default: server's; the released judge used 4)")  # fmt: skip
    p.add_argument("--max-tokens-field", choices=("max_tokens", "max_completion_tokens"),
                   default="max_tokens", help="request field for --max-tokens")  # fmt: skip
    p.add_argument("--seed-sampling", type=int, dest="sampling_seed",
                   help="sampling seed, for servers that support it")  # fmt: skip
    p.add_argument("--timeout", type=positive_float, default=120.0,
                   help="seconds per attempt (default 120)")  # fmt: skip
    p.add_argument("--retries", type=non_negative_int, default=4,
                   help="retries after a 408/429/5xx, time-out or connection error (default 4)")  # fmt: skip
    p.add_argument("--backoff", type=positive_float, default=1.0,
                   help="first retry wait in seconds, doubled each retry (default 1)")  # fmt: skip
    p.add_argument("--limit", type=positive_int, help="ask at most this many this run")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=judge_command)


def judge_command(args: argparse.Namespace) -> int:
    import os

    from tvr.vlm.client import RetryPolicy, Sampling, resolve_endpoint
    from tvr.vtt.judge import JudgeInputs, named_predictions, run_judge, summary_lines

    endpoint = resolve_endpoint(args.base_url, args.model, args.api_key, os.environ)
    inputs = JudgeInputs(data=args.data, predictions=named_predictions(args.predictions),
                         out=args.out, split=args.split, subset=args.subset, seed=args.seed,
                         prompt=args.prompt, ratings=args.ratings)  # fmt: skip
    done = run_judge(
        inputs, endpoint,
        sampling=Sampling(args.temperature, args.max_tokens, args.sampling_seed,
                          args.max_tokens_field),
        policy=RetryPolicy(timeout_s=args.timeout, retries=args.retries, backoff_s=args.backoff),
        concurrency=args.concurrency, limit=args.limit, progress=not args.quiet,
    )  # fmt: skip
    r = done.run
    print(f"{r.items} to judge: {r.already_done} judged before, {r.attempted} asked, "
          f"{r.succeeded} answered, {r.failed} failed"
          + (f", {r.not_attempted} left for later" if r.not_attempted else ""))  # fmt: skip
    print("\n".join(summary_lines(done.summary)))
    print(f"wrote {done.out}/ratings.jsonl, summary.json, summary.md")
    return 1 if r.failed else 0


def register_ratings(sub: argparse._SubParsersAction) -> None:
    """`tvr vtt ratings`."""
    from tvr.cli._common import positive_int

    p = sub.add_parser(
        "ratings",
        help="export the human ratings of `tvr serve --benchmark vtt` and their table",
        description="Read the ratings from the results database and write OUT/ratings.jsonl, "
        "ratings.csv, summary.json and table.md: per model the mean fluency, relevance and "
        "logical soundness (Likert 1-5) over its decided ratings, as Table 2's right-hand "
        "columns, with the paper's rows beside them.",
    )
    p.add_argument("--db", required=True,
                   help="the database URL of the server (e.g. sqlite:///DATA/human-tests.sqlite)")  # fmt: skip
    p.add_argument("--out", required=True, type=Path, help="the output folder")
    p.add_argument("--raters", type=positive_int, default=2,
                   help="decided ratings wanted per sample (counted in the table; default 2)")  # fmt: skip
    p.set_defaults(func=ratings_command)


def ratings_command(args: argparse.Namespace) -> int:
    from tvr.vtt.web.export import table_lines, write_ratings

    summary = write_ratings(args.db, args.out, args.raters)
    print("\n".join(table_lines(summary["models"], args.raters)))
    print(f"wrote {args.out}/ratings.jsonl, ratings.csv, summary.json, table.md "
          f"({summary['ratings']} ratings)")  # fmt: skip
    return 0


# --- models: train, predict, the nearest-neighbour baseline ------------------------------------
#: train option -> VttTrainConfig field, for the options that map one to one (the model's options
#: are tvr.vtt.train.config.MODEL_OPTIONS)
_RUN_FIELDS = (
    "epochs", "max_minutes", "batch_size", "lr", "warmup_steps", "weight_decay", "seed",
    "num_workers", "accelerator", "devices", "precision", "output_dir", "run_name",
    "feature_cache", "predict_split", "decode", "beam_size", "log_every_n_steps",
)  # fmt: skip


def register_models(sub: argparse._SubParsersAction) -> None:
    """`tvr vtt train`, `tvr vtt predict`, `tvr vtt baseline nearest`."""
    for add in (_register_train, _register_predict, _register_baseline):
        add(sub)


def _register_train(sub: argparse._SubParsersAction) -> None:
    """`tvr vtt train`."""
    from tvr.cli._common import add_run_options, non_negative_int, positive_float, positive_int

    p = sub.add_parser(
        "train",
        help="train TTNet, TTNet_Base or GLACNet on a folder in VTT's layout",
        description="Train with PyTorch Lightning on DIR/meta/vtt.jsonl and DIR/states/ (the "
        "released layout, or `tvr vtt testbed`'s). The run folder OUTPUT_DIR/RUN gets "
        "config.json, metrics.csv, checkpoints/best.ckpt (best val CIDEr-D of greedy decodes) "
        "and last.ckpt, and predictions.jsonl of --predict-split for `tvr vtt evaluate`. "
        "Running it again resumes from last.ckpt; a folder of another run is never written "
        "into. A frozen encoder's features are cached (--feature-cache). Defaults are the "
        "paper's (AdamW 1e-4, 2,000 warm-up steps, weight decay 1e-3, batch 32, 50 epochs). "
        "See docs/vtt.md.",
    )
    p.add_argument("--data", required=True, type=Path, help="the data folder (meta/, states/)")
    p.add_argument("--model", choices=("ttnet", "ttnet-base", "glacnet"), default="ttnet",
                   help="default ttnet (TTNet with Diff, MTM and Aux)")  # fmt: skip
    for part, what in (("diff", "the difference tokens"), ("mtm", "masked transformation "
                       "modelling"), ("aux", "the topic/category heads")):  # fmt: skip
        p.add_argument(f"--no-{part}", action="store_true",
                       help=f"TTNet without {what} (an ablation)")  # fmt: skip
    p.add_argument("--model-size", choices=("paper", "tiny"), default="paper",
                   help="paper: CLIP ViT-L-14, width 512, 8 heads (default); tiny: a 2-layer "
                   "64-px ViT, width 64, 4 heads, for CPU runs and tests")  # fmt: skip
    p.add_argument("--encoder", help="an open_clip architecture (ViT-L-14, ViT-B-32, RN101, "
                   "...; ViT-L-14-quickgelu for OpenAI's weights), tvr-tiny or tvr-tiny-128")  # fmt: skip
    p.add_argument("--encoder-weights", help="a local CLIP checkpoint file (none: random weights "
                   "from --encoder-seed; nothing is downloaded)")  # fmt: skip
    p.add_argument("--encoder-seed", type=int, help="seed of random encoder weights (default 0)")
    p.add_argument("--train-encoder", action="store_true",
                   help="train the image encoder too (default: frozen, features cached)")  # fmt: skip
    p.add_argument("--dim", type=positive_int, help="model width (default: the --model-size's)")
    p.add_argument(
        "--heads", type=positive_int, help="attention heads (default: the --model-size's)"
    )
    p.add_argument("--vocab", choices=("clip", "train"),
                   help="clip: the decoder reads and predicts all 49,408 CLIP ids (the paper; "
                   "default); train: only the ids of the training descriptions (much faster on "
                   "a CPU; not the paper's)")  # fmt: skip
    p.add_argument("--aux-weights", choices=("paper", "released"),
                   help="the Aux loss weights: the paper's (category 0.025, topic 0.1; default) "
                   "or the released configuration's")  # fmt: skip
    p.add_argument("--no-cascade", action="store_true",
                   help="GLACNet: start every description's decoder afresh")  # fmt: skip
    p.add_argument("--epochs", type=positive_int, help="default 50")
    p.add_argument("--batch-size", type=positive_int, help="default 32")
    p.add_argument("--lr", type=positive_float, help="peak learning rate (default 1e-4)")
    p.add_argument("--warmup-steps", type=non_negative_int, help="default 2000")
    p.add_argument("--weight-decay", type=float, help="default 1e-3")
    add_run_options(p, "runs", "the model, e.g. ttnet-no-diff")
    p.add_argument("--feature-cache", help="folder of the feature cache (default "
                   "OUTPUT_DIR/features)")  # fmt: skip
    p.add_argument("--predict-split", choices=("train", "val", "test"),
                   help="split of predictions.jsonl (default test)")  # fmt: skip
    _decode_options(p, sampling=False)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=train_command)


def _register_predict(sub: argparse._SubParsersAction) -> None:
    """`tvr vtt predict`."""
    p = sub.add_parser(
        "predict",
        help="write the descriptions of a trained VTT model for one split",
        description="Decode one split of a data folder with a checkpoint of `tvr vtt train` and "
        'write JSON lines {"id", "transformations": [N strings]} for `tvr vtt evaluate`, and '
        "the settings beside them (OUT with .config.json for .jsonl). Greedy by default "
        "(deterministic); beam search; or the paper's top-k/top-p sampling, seeded.",
    )
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--checkpoint", type=Path, help="a checkpoint file")
    src.add_argument("--run", type=Path, help="a run folder of `tvr vtt train` (its best.ckpt)")
    p.add_argument("--data", type=Path, help="the data folder (default: the run's)")
    p.add_argument("--split", choices=("train", "val", "test"), default="test",
                   help="default test")  # fmt: skip
    p.add_argument("--out", required=True, type=Path, help="the prediction file to write")
    add_file_overwrite_option(p, "predictions", beside=_settings_file)
    p.add_argument("--feature-cache", type=Path, help="default: the run's")
    _decode_options(p, sampling=True)
    p.set_defaults(func=predict_command)


def _register_baseline(sub: argparse._SubParsersAction) -> None:
    """`tvr vtt baseline nearest`."""

    p = sub.add_parser(
        "baseline",
        help="the nearest-neighbour and random baselines",
        description="nearest: give each transformation the training description of the most "
        "similar training image pair (cosine of pair features of a frozen CLIP encoder: "
        "both = [a, b, b - a], each unit length; concat = [a, b]; diff = b - a). random: a "
        "training description drawn uniformly for each transformation (--seed).",
    )
    p.add_argument("name", choices=("nearest", "random"), metavar="KIND",
                   help="the baseline: nearest or random")  # fmt: skip
    p.add_argument("--data", required=True, type=Path, help="the data folder (meta/, states/)")
    p.add_argument("--out", required=True, type=Path, help="the prediction file to write")
    add_file_overwrite_option(p, "predictions", beside=_settings_file)
    p.add_argument("--split", choices=("train", "val", "test"), default="test",
                   help="default test")  # fmt: skip
    p.add_argument("--seed", type=int, default=0, help="random: its seed (default 0)")
    p.add_argument("--encoder", default="ViT-L-14", help="as for train (default ViT-L-14)")
    p.add_argument("--encoder-weights", help="a local CLIP checkpoint (none: random weights)")
    p.add_argument("--encoder-seed", type=int, default=0, help="default 0")
    p.add_argument("--pair", choices=("both", "concat", "diff"), default="both",
                   help="the pair feature (default both)")  # fmt: skip
    p.add_argument("--feature-cache", type=Path, default=Path("runs/features"),
                   help="default runs/features (the one `tvr vtt train` uses by default)")  # fmt: skip
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=baseline_command)


def _decode_options(p: argparse.ArgumentParser, sampling: bool) -> None:
    from tvr.cli._common import positive_float, positive_int

    p.add_argument("--decode", choices=("greedy", "beam", "sample"),
                   default="greedy" if sampling else None,
                   help="greedy (default), beam search, or the paper's sampling")  # fmt: skip
    p.add_argument("--beam-size", type=positive_int, default=3 if sampling else None,
                   help="beams (default 3)")  # fmt: skip
    if not sampling:
        return
    p.add_argument("--top-k", type=int, default=100, help="sampling: k (default 100)")
    p.add_argument("--top-p", type=float, default=0.9, help="sampling: p (default 0.9)")
    p.add_argument("--temperature", type=positive_float, default=1.0, help="default 1")
    p.add_argument("--repetition-penalty", type=positive_float, default=1.0,
                   help="sampling: CTRL's penalty (default 1; the released setting is 1.2)")  # fmt: skip
    p.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")


def train_command(args: argparse.Namespace) -> int:
    from tvr.cli._common import apply_threads, given_options, needs_extra
    from tvr.core.errors import UserError

    with needs_extra("training needs the train and clip extras"):
        from tvr.vtt.train.config import MODEL_OPTIONS, model_config, train_config
        from tvr.vtt.train.run import train
    apply_threads(args)
    try:
        model = model_config(args.model, args.model_size,
                             [p for p in ("diff", "mtm", "aux") if getattr(args, f"no_{p}")],
                             args.train_encoder, not args.no_cascade,
                             **given_options(args, MODEL_OPTIONS))  # fmt: skip
        config = train_config(args.data, model, resume=not args.no_resume,
                              **given_options(args, _RUN_FIELDS))  # fmt: skip
    except ValueError as err:
        raise UserError(str(err)) from None
    run_dir = train(config, progress_bar=not args.quiet)
    print(f"run folder: {run_dir}")
    return 0


def predict_command(args: argparse.Namespace) -> int:
    from tvr.cli._common import needs_extra
    from tvr.core.errors import UserError

    with needs_extra("prediction needs the train and clip extras"):
        from tvr.vtt.models.decoding import DecodeOptions
        from tvr.vtt.train.predict import load_module, predict
    _check_prediction_file(args.out)
    checkpoint = args.checkpoint or args.run / "checkpoints" / "best.ckpt"
    try:
        options = DecodeOptions(args.decode, beam_size=args.beam_size, top_k=args.top_k,
                                top_p=args.top_p, temperature=args.temperature,
                                repetition_penalty=args.repetition_penalty, seed=args.seed)  # fmt: skip
    except ValueError as err:
        raise UserError(str(err)) from None
    device = _device()
    module = load_module(checkpoint, device)
    data = args.data or module.config.data
    found = predict(module, data, args.split, options, args.feature_cache, device=device)
    settings = {"checkpoint": str(checkpoint), "data": str(data), "split": args.split,
                "decode": vars(options)}  # fmt: skip
    return _write_prediction_file(args.out, found, settings)


def baseline_command(args: argparse.Namespace) -> int:
    from tvr.cli._common import needs_extra

    if args.name == "random":
        from tvr.vtt.eval.random_baseline import random_predictions, random_settings

        _check_prediction_file(args.out)
        found = random_predictions(args.data, args.split, args.seed)
        return _write_prediction_file(
            args.out, found, random_settings(args.data, args.split, args.seed)
        )
    with needs_extra("the baseline needs the clip extra"):
        from tvr.vtt.eval.baselines import NearestConfig, nearest_predictions
    _check_prediction_file(args.out)
    config = NearestConfig(data=str(args.data), split=args.split, encoder=args.encoder,
                           encoder_weights=args.encoder_weights, encoder_seed=args.encoder_seed,
                           pair=args.pair, feature_cache=str(args.feature_cache))  # fmt: skip
    found = nearest_predictions(config, _device(), progress=not args.quiet)
    return _write_prediction_file(args.out, found, config.to_dict())


def _check_prediction_file(out: Path) -> None:
    from tvr.core.errors import UserError

    if out.is_dir():
        raise UserError(f"--out {out} is a folder; give a file name")


def _device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def _write_prediction_file(out: Path, found: Any, settings: dict[str, Any]) -> int:
    """Write the predictions, their settings beside them (OUT with .config.json), and say so."""
    from tvr.core.jsonl import write_json
    from tvr.vtt.data.predictions import settings_path, write_predictions

    write_predictions(out, found)
    write_json(settings_path(out), settings)
    print(f"wrote {out} ({len(found)} samples)")
    return 0


def _settings_file(out: Path) -> list[Path]:
    """The settings file written beside a predictions file (kept and put back with it)."""
    from tvr.vtt.data.predictions import settings_path

    return [settings_path(out)]
