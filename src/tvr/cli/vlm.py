"""`tvr vlm`: ask a vision-language model about a benchmark (run, export, prompt).

`run` asks the model, `export` turns TRANCE replies into predictions, `prompt` shows the prompt
of one item.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tvr.cli._common import non_negative_int, positive_float, positive_int
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
        help="VisualTrans JSON file, or TRANCE samples.jsonl",
    )
    p.add_argument(
        "--images",
        required=True,
        type=Path,
        help="image folder (VisualTrans: the paths in the JSON are relative to it; "
        "TRANCE: holds {id}-init.C.png and {id}-fin.{L,C,R}.png)",
    )
    p.add_argument(
        "--setting",
        choices=SETTINGS,
        default="event",
        help="TRANCE only: Basic (one-step samples, one step), Event (final image from C), "
        "View (one item per sample and final view); default event",
    )
    p.add_argument(
        "--views",
        type=_views,
        default=VIEWS,
        help="TRANCE View only: the final views to ask about, e.g. 'L,R' (default L,C,R; a "
        "sample's own 'view' field wins)",
    )


def register(subparsers: argparse._SubParsersAction) -> None:
    vlm = subparsers.add_parser(
        "vlm",
        help="run a vision-language model (OpenAI-compatible API) on VisualTrans or TRANCE",
        description="Ask a vision-language model served by any OpenAI-compatible "
        "chat-completions endpoint (hosted APIs, vLLM, Ollama, ...) about VisualTrans or TRANCE "
        "items. See docs/visualtrans.md.",
    )
    sub = vlm.add_subparsers(dest="vlm_command", metavar="SUBCOMMAND", required=True)

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

    p = sub.add_parser(
        "export",
        help="TRANCE: turn replies into a predictions file for `tvr evaluate`",
        description="Read each TRANCE reply as JSON steps and write one prediction line per "
        'item: {"id": SAMPLE, "steps": [{"obj": 3, "value": "color.red"}, ...]} (View adds '
        '"view"). Replies that cannot be read, failed requests and items without a reply get '
        '"steps": [] (scored wrong) and are listed in OUT.unparsed.jsonl.',
    )
    _add_task_options(p)
    p.add_argument("--results", required=True, type=Path, help="results JSONL of `tvr vlm run`")
    p.add_argument("--out", required=True, type=Path, help="predictions JSONL to write")
    p.set_defaults(func=export_command)

    p = sub.add_parser(
        "prompt",
        help="print the filled prompt of one item (no request is made)",
        description="Print the text part of the request for one item and list its images.",
    )
    _add_task_options(p)
    p.add_argument("--prompt", type=Path, help="prompt template file")
    p.add_argument("--item", type=non_negative_int, default=0, help="item number (default 0)")
    p.set_defaults(func=prompt_command)


def _adapter(args: argparse.Namespace):
    from tvr.vlm.tasks import make_adapter

    options = {"setting": args.setting, "views": args.views} if args.task == "trance" else {}
    return make_adapter(args.task, args.data, args.images, **options)


def run_command(args: argparse.Namespace) -> int:
    from tvr.vlm.client import RetryPolicy, Sampling, resolve_endpoint
    from tvr.vlm.runner import run, runs_log_path
    from tvr.vlm.templates import load_template

    endpoint = resolve_endpoint(args.base_url, args.model, args.api_key, os.environ)
    task = _adapter(args)
    template = load_template(args.prompt, task)
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


def export_command(args: argparse.Namespace) -> int:
    from tvr.trance.vlm_task import TranceTask, export_predictions

    if args.task != "trance":
        raise UserError(
            "export is for --task trance; score VisualTrans with `tvr visualtrans score`"
        )
    task = _adapter(args)
    assert isinstance(task, TranceTask)
    s = export_predictions(task, args.results, args.out)
    print(
        f"{s.items} predictions written to {s.predictions}: {s.parsed} read, {s.unparsed} "
        f"unreadable, {s.without_reply} without a reply; listed in {s.unparsed_file}"
    )
    return 0


def prompt_command(args: argparse.Namespace) -> int:
    from tvr.vlm.templates import load_template

    task = _adapter(args)
    template = load_template(args.prompt, task)
    template.check_fields(set(task.fields))
    items = task.items()
    if args.item >= len(items):
        raise UserError(f"--item {args.item}: the task has {len(items)} items")
    item = items[args.item]
    print(template.render(dict(item.fields)))
    print(json.dumps({"id": item.id, "images": [str(p) for p in item.images]}))
    return 0
