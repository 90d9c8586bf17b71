"""`tvr vlm`: ask a vision-language model about a benchmark (run, export, prompt, report).

`run` asks the model, `export` turns TRANCE, VTT, TRANCO or CLEVRER replies into predictions,
`prompt` shows the prompt of one item, `report` puts scored runs on one leaderboard.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tvr.cli._common import (
    add_file_overwrite_option,
    add_overwrite_option,
    non_negative_int,
    positive_float,
    positive_int,
)
from tvr.core.errors import UserError
from tvr.trance.world.vocab import SETTINGS, VIEWS
from tvr.vlm.tasks import task_names

if TYPE_CHECKING:
    pass

ENV_HELP = (
    "The endpoint, model and key come from the options or from the environment: "
    "TVR_VLM_BASE_URL (or OPENAI_BASE_URL), TVR_VLM_MODEL, TVR_VLM_API_KEY (or OPENAI_API_KEY). "
    "Prefer the environment for the key: an option shows in the process list."
)


def _views(text: str) -> tuple[str, ...]:
    views = tuple(v.strip() for v in text.split(",") if v.strip())
    if not views or any(v not in VIEWS for v in views):
        raise argparse.ArgumentTypeError(
            f"views are a comma-separated subset of L,C,R; got {text!r}"
        )
    return views


def _add_task_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--task", required=True, choices=task_names(), help="benchmark")
    p.add_argument(
        "--data",
        required=True,
        type=Path,
        help="VisualTrans JSON file (or its folder), TRANCE samples.jsonl (or a dataset "
        "folder), VTT records (meta/vtt.jsonl or the release folder), a TRANCO dataset folder, "
        "or a CLEVRER set's folder (its --split) or question file",
    )
    p.add_argument(
        "--images",
        type=Path,
        help="image folder, where the data's own layout does not say it (VisualTrans: the "
        "paths in the JSON are relative to it, default its images/ folder or its folder; "
        "TRANCE: holds {id}-init.C.png and {id}-fin.{L,C,R}.png, in it or a folder below, "
        "default the samples' folder; VTT: the states/ folder of {id}_{N+1}_{i}.jpg, default "
        "the release folder's; TRANCO: default the dataset folder; CLEVRER: where the videos "
        "are, default the set's folder)",
    )
    p.add_argument(
        "--setting",
        choices=SETTINGS,
        help="TRANCE only: Basic (one-step samples, one step), Event (final image from C), "
        "View (one item per sample and final view); default: the data's config.json, else event",
    )
    p.add_argument(
        "--views",
        type=_views,
        default=VIEWS,
        help="TRANCE View only: the final views to ask about, e.g. 'L,R' (default L,C,R; a "
        "sample's own 'view' field wins)",
    )
    p.add_argument(
        "--split",
        choices=("train", "val", "test"),
        default="test",
        help="VTT, TRANCO, a TRANCE dataset folder: the split to ask about (default test)",
    )
    p.add_argument(
        "--variant",
        choices=("strip", "sep", "multiturn"),
        default="strip",
        help="VTT only: strip (the N+1 states in one image, panels numbered in state order; "
        "default), sep (each state a separate image) or multiturn (the event first, then one "
        "turn per adjacent pair)",
    )
    p.add_argument(
        "--with-topic",
        action="store_true",
        help="VTT strip/sep only: the prompt that also asks for the topic (Fig. 8's +Topic)",
    )
    p.add_argument(
        "--frames",
        type=positive_int,
        default=8,
        help="CLEVRER only: frames sent per video, evenly spaced from its first to its last "
        "(default 8)",
    )
    p.add_argument(
        "--video",
        choices=("frames", "inline", "path"),
        default="frames",
        help="CLEVRER only: send the video as --frames images (default), or for endpoints that "
        "take video (a video_url part) the mp4 inline as a data URL, or its path as a file:// "
        "URL (a server on the same disk)",
    )


def register(subparsers: argparse._SubParsersAction) -> None:
    vlm = subparsers.add_parser(
        "vlm",
        help="run a vision-language model (OpenAI-compatible API) on any of the five benchmarks",
        description="Ask a vision-language model served by any OpenAI-compatible "
        "chat-completions endpoint (hosted APIs, vLLM, Ollama, ...) about VisualTrans, TRANCE, VTT, TRANCO or "
        "CLEVRER items; `tvr vlm report` puts scored runs on one leaderboard. See "
        "docs/visualtrans.md, docs/clevrer.md, docs/vtt.md, docs/tranco.md, docs/leaderboard.md.",
    )
    sub = vlm.add_subparsers(dest="vlm_command", metavar="SUBCOMMAND", required=True)
    for add in (_register_run, _register_export, _register_prompt, _register_report):
        add(sub)


def _register_run(sub: argparse._SubParsersAction) -> None:
    """`tvr vlm run`."""
    p = sub.add_parser(
        "run",
        help="ask the model about every item; resumable",
        description="Send each item (a prompt template filled with the item, then its images as "
        "base64 data URLs) to POST {base-url}/chat/completions and append one JSON line per "
        "outcome to --out. Re-running with the same --out skips items that already have a "
        "reply and asks again those that failed. " + ENV_HELP,
    )
    _add_task_options(p)
    p.add_argument("--out", required=True, type=Path, help="results JSONL (appended to)")
    p.add_argument("--base-url", help="API base URL, e.g. https://api.openai.com/v1")
    p.add_argument("--model", help="model name as the server knows it")
    p.add_argument("--api-key", help="API key (sent only as 'Authorization: Bearer')")
    p.add_argument(
        "--prompt", type=Path, help="prompt template file (default: the task's shipped one)"
    )
    p.add_argument(
        "--followup-prompt",
        type=Path,
        help="template file of the follow-up turns of a conversation (VTT multiturn; default: "
        "the task's shipped one)",
    )
    p.add_argument(
        "--concurrency", type=positive_int, default=4, help="requests in flight (default 4)"
    )
    p.add_argument("--temperature", type=float, help="sampling temperature (default: server's)")
    p.add_argument("--max-tokens", type=positive_int, help="reply token limit (default: server's)")
    p.add_argument(
        "--max-tokens-field",
        choices=("max_tokens", "max_completion_tokens"),
        default="max_tokens",
        help="request field for --max-tokens (some APIs want max_completion_tokens)",
    )
    p.add_argument("--seed", type=int, help="sampling seed, for servers that support it")
    p.add_argument(
        "--timeout", type=positive_float, default=120.0, help="seconds per attempt (default 120)"
    )
    p.add_argument(
        "--retries",
        type=non_negative_int,
        default=4,
        help="retries after a 408/429/5xx, time-out or connection error (default 4)",
    )
    p.add_argument(
        "--backoff",
        type=positive_float,
        default=1.0,
        help="first retry wait in seconds, doubled each retry, capped at 60 (default 1)",
    )
    p.add_argument("--limit", type=positive_int, help="ask at most this many items this run")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run_command)


def _register_export(sub: argparse._SubParsersAction) -> None:
    """`tvr vlm export`."""
    p = sub.add_parser(
        "export",
        help="TRANCE, VTT, TRANCO: turn replies into a predictions file for `tvr evaluate`, "
        "`tvr vtt evaluate` or `tvr tranco evaluate` (CLEVRER: an answer file for "
        "`tvr clevrer evaluate`)",
        description="TRANCE: read each reply as JSON steps and write one prediction line per "
        'item: {"id": SAMPLE, "steps": [{"obj": 3, "value": "color.red"}, ...]} (View adds '
        '"view"). Replies that cannot be read, failed requests and items without a reply get '
        '"steps": [] (scored wrong) and are listed in OUT.unparsed.jsonl. VTT: read each reply '
        'as JSON ({"topic", "transformations": [...]}, also in a ``` fence) or numbered lines '
        '(multiturn: one description per turn) and write {"id", "transformations", "topic"} '
        "lines; missing descriptions are counted and scored as empty by `tvr vtt evaluate`, "
        "unreadable replies and items without a reply are listed in OUT.unparsed.jsonl. "
        'TRANCO: read each reply\'s list of clip numbers and write {"id", "clips"} lines for '
        "`tvr tranco evaluate`; unreadable replies and items without a reply get no clips "
        "(scored wrong) and are listed in OUT.unparsed.jsonl. CLEVRER: read each reply as a "
        "word or number (descriptive) or a verdict per choice and write the answer file (the "
        "challenge's format) for `tvr clevrer evaluate`; questions whose reply cannot be read "
        "are left out (scored wrong) and listed in OUT.unparsed.jsonl.",
    )
    _add_task_options(p)
    p.add_argument("--results", required=True, type=Path, help="results JSONL of `tvr vlm run`")
    p.add_argument("--out", required=True, type=Path, help="predictions JSONL to write")
    add_file_overwrite_option(p, "predictions")
    p.set_defaults(func=export_command)


def _register_prompt(sub: argparse._SubParsersAction) -> None:
    """`tvr vlm prompt`."""
    p = sub.add_parser(
        "prompt",
        help="print the filled prompt of one item (no request is made)",
        description="Print the text part of the request for one item and list its images.",
    )
    _add_task_options(p)
    p.add_argument("--prompt", type=Path, help="prompt template file")
    p.add_argument(
        "--followup-prompt", type=Path, help="template file of a conversation's follow-up turns"
    )
    p.add_argument("--item", type=non_negative_int, default=0, help="item number (default 0)")
    p.set_defaults(func=prompt_command)


def _register_report(sub: argparse._SubParsersAction) -> None:
    """`tvr vlm report`."""
    p = sub.add_parser(
        "report",
        help="one leaderboard of scored VLM runs over any benchmarks (Markdown, CSV, JSON, PNG)",
        description="Collect scored VLM runs into one table and one plot: each RUN is the --out "
        "folder of a benchmark's evaluate command (tvr evaluate, tvr vtt/tranco/visualtrans/"
        "clevrer evaluate), optionally LABEL=PATH. The model comes from the run log of the "
        "results file the predictions were exported from; the paper's metrics, the paper's "
        "published rows and each run's parse failures (unreadable replies / items) are shown. "
        "Writes leaderboard.md, .csv, .json and .png into --out. See docs/leaderboard.md.",
    )
    p.add_argument("runs", nargs="+", metavar="[LABEL=]EVAL_DIR", help="evaluation folders")
    p.add_argument("--out", required=True, type=Path, help="folder to write the leaderboard to")
    p.add_argument("--json", action="store_true", help="print the leaderboard as JSON")
    add_overwrite_option(p, "a leaderboard")
    p.set_defaults(func=report_command)


#: task -> the options of its adapter, from the command line
TASK_OPTIONS = {
    "trance": lambda a: {"setting": a.setting, "views": a.views, "split": a.split},
    "vtt": lambda a: {"split": a.split, "variant": a.variant, "topic": a.with_topic},
    "tranco": lambda a: {"split": a.split},
    "clevrer": lambda a: {"split": a.split, "frames": a.frames, "video": a.video},
}


def _adapter(args: argparse.Namespace):
    from tvr.vlm.tasks import make_adapter

    options = TASK_OPTIONS.get(args.task, lambda a: {})(args)
    return make_adapter(args.task, args.data, args.images, **options)


def run_command(args: argparse.Namespace) -> int:
    from tvr.vlm.client import RetryPolicy, Sampling, resolve_endpoint
    from tvr.vlm.runner import run, runs_log_path
    from tvr.vlm.templates import load_followup_template, load_template

    endpoint = resolve_endpoint(args.base_url, args.model, args.api_key, os.environ)
    task = _adapter(args)
    template = load_template(args.prompt, task)
    followup = load_followup_template(args.followup_prompt, task)
    summary = run(
        task,
        template,
        endpoint,
        args.out,
        sampling=Sampling(args.temperature, args.max_tokens, args.seed, args.max_tokens_field),
        policy=RetryPolicy(timeout_s=args.timeout, retries=args.retries, backoff_s=args.backoff),
        concurrency=args.concurrency,
        limit=args.limit,
        progress=not args.quiet,
        followup=followup,
    )
    t = summary.tokens
    print(
        f"{summary.items} items: {summary.already_done} already answered, "
        f"{summary.attempted} asked ({summary.retried_failures} had failed before), "
        f"{summary.succeeded} answered, {summary.failed} failed"
        + (f", {summary.not_attempted} left for later" if summary.not_attempted else "")
    )
    print(
        f"tokens this run: prompt {t['prompt_tokens']}, completion {t['completion_tokens']}, "
        f"total {t['total_tokens']}; {summary.elapsed_s:.1f} s"
    )
    for failure in summary.failures[:10]:
        print(f"failed {failure['id']}: {failure['error']}", file=sys.stderr)
    if summary.unreadable_lines:
        print(f"note: {summary.unreadable_lines} unreadable line(s) in {args.out} were ignored")
    print(f"results: {args.out}; run log: {runs_log_path(args.out)}")
    return 1 if summary.failed else 0


def _export_trance(task, results: Path, out: Path) -> str:
    from tvr.trance.vlm_task import export_predictions

    s = export_predictions(task, results, out)
    return (
        f"{s.items} predictions written to {s.predictions}: {s.parsed} read, {s.unparsed} "
        f"unreadable, {s.without_reply} without a reply; listed in {s.unparsed_file}"
    )


def _export_vtt(task, results: Path, out: Path) -> str:
    from tvr.vtt.vlm_task import export_predictions, summary_line

    return summary_line(export_predictions(task, results, out))


def _export_tranco(task, results: Path, out: Path) -> str:
    from tvr.tranco.vlm_task import export_predictions, summary_line

    return summary_line(export_predictions(task, results, out))


def _export_clevrer(task, results: Path, out: Path) -> str:
    from tvr.clevrer.vlm_task import export_predictions, summary_line

    return summary_line(export_predictions(task, results, out))


#: task -> its exporter (results file -> predictions file; returns the line to print)
EXPORTERS = {"trance": _export_trance, "vtt": _export_vtt, "tranco": _export_tranco,
             "clevrer": _export_clevrer}  # fmt: skip


def export_command(args: argparse.Namespace) -> int:
    if args.task not in EXPORTERS:
        raise UserError(
            f"export is for --task {' or '.join(sorted(EXPORTERS))}; score VisualTrans with "
            "`tvr visualtrans evaluate`"
        )
    print(EXPORTERS[args.task](_adapter(args), args.results, args.out))
    return 0


def prompt_command(args: argparse.Namespace) -> int:
    from tvr.vlm.tasks import followup_fields
    from tvr.vlm.templates import load_followup_template, load_template

    task = _adapter(args)
    template = load_template(args.prompt, task)
    template.check_fields(set(task.fields))
    followup = load_followup_template(args.followup_prompt, task)
    if followup is not None:
        followup.check_fields(set(followup_fields(task)))
    items = task.items()
    if args.item >= len(items):
        raise UserError(f"--item {args.item}: the task has {len(items)} items")
    item = items[args.item]
    print(template.render(dict(item.fields)))
    print(json.dumps({"id": item.id, "images": [str(p) for p in item.images]}))
    for k, turn in enumerate(item.followups, start=1):
        assert followup is not None
        print(f"--- turn {k + 1} (after the model's reply)")
        print(followup.render({**item.fields, **turn.fields}))
        print(json.dumps({"images": [str(p) for p in turn.images]}))
    return 0


def report_command(args: argparse.Namespace) -> int:
    from tvr.vlm.report import report

    return report(args.runs, args.out, as_json=args.json)
