"""Run a task's items through a chat endpoint: bounded concurrency, resume, a token log.

Resume: the results file is read first; items whose id already has a successful line are
skipped, items that failed before are asked again. Every outcome is appended as one flushed
line as soon as it arrives, so a killed run loses at most the requests in flight.

A results line: `id`, `task`, `model`, `reply` (None on failure), `reasoning` (when the server
returns it separately), `finish_reason`, `usage` (the server's token counts), `error` (None on
success), `http_status` (of the last failed attempt), `attempts`, `elapsed_s`, `finished_at`,
and the item's metadata under `meta`. A conversation (an item with follow-up turns) also has
`replies`, every turn's reply in order; `reply` is the last one, `usage` and `attempts` are
summed over the turns, and a turn that fails fails the item (asked again from its first turn).

Each run also appends one line to `<results>.runs.jsonl`: when, which model and endpoint (no
key, no user info), the prompt's source and SHA-256, the options, the counts and the token
totals.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tvr.core.errors import UserError
from tvr.vlm.client import (
    ChatClient,
    ChatError,
    ChatReply,
    Endpoint,
    RetryPolicy,
    Sampling,
    public_url,
)
from tvr.vlm.results import ResultsWriter, is_success, read_results
from tvr.vlm.tasks import (
    TaskAdapter,
    TaskItem,
    build_messages,
    check_images,
    followup_fields,
    followup_message,
)
from tvr.vlm.templates import PromptTemplate

TOKEN_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens")


@dataclass
class RunSummary:
    """The counts and token totals of one run."""

    items: int = 0  # distinct items of the task
    already_done: int = 0  # skipped: a successful line existed
    retried_failures: int = 0  # asked again: only failed lines existed
    attempted: int = 0
    succeeded: int = 0
    failed: int = 0
    not_attempted: int = 0  # left for a later run (--limit)
    unreadable_lines: int = 0  # torn or foreign lines found in the results file
    tokens: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TOKEN_KEYS, 0))
    elapsed_s: float = 0.0
    failures: list[dict[str, Any]] = field(default_factory=list)

    def add_usage(self, usage: dict[str, Any] | None) -> None:
        for key in TOKEN_KEYS:
            value = (usage or {}).get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                self.tokens[key] += value


def runs_log_path(results: str | Path) -> Path:
    """`out.jsonl` -> `out.runs.jsonl`."""
    p = Path(results)
    return p.with_name(p.stem + ".runs" + (p.suffix or ".jsonl"))


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def check_model_matches(existing: dict[str, dict[str, Any]], model: str, path: Path) -> None:
    """UserError if the results file already holds successful replies of another model."""
    others = sorted(
        {
            str(r.get("model"))
            for r in existing.values()
            if is_success(r) and r.get("model") != model
        }
    )
    if others:
        raise UserError(
            f"{path} holds replies of model(s) {', '.join(others)}, not {model}; "
            "use another --out file for another model"
        )


async def run_items(
    task: TaskAdapter,
    template: PromptTemplate,
    endpoint: Endpoint,
    out: str | Path,
    *,
    sampling: Sampling | None = None,
    policy: RetryPolicy | None = None,
    concurrency: int = 4,
    limit: int | None = None,
    progress: bool = True,
    followup: PromptTemplate | None = None,
) -> RunSummary:
    """Ask every item not yet answered in `out`; append each outcome; return the counts.
    `followup` is the template of the follow-up turns of conversation items."""
    if concurrency < 1:
        raise UserError("concurrency must be at least 1")
    out = Path(out)
    started, clock = _now(), time.monotonic()
    template.check_fields(set(task.fields))
    if followup is not None:
        followup.check_fields(set(followup_fields(task)))
    items = task.items()
    if followup is None and any(it.followups for it in items):
        raise UserError(f"task {task.name}: its items are conversations; give a follow-up template")
    existing = read_results(out)
    check_model_matches(existing.records, endpoint.model, out)
    done, failed_before = existing.done_ids(), existing.failed_ids()
    todo = [it for it in items if it.id not in done]
    summary = RunSummary(
        items=len(items),
        already_done=len(items) - len(todo),
        retried_failures=sum(it.id in failed_before for it in todo),
        unreadable_lines=len(existing.unreadable_lines),
    )
    if limit is not None:
        summary.not_attempted = max(0, len(todo) - limit)
        todo = todo[:limit]
    check_images(todo)
    for it in todo[:1]:  # a bad template fails before any request
        template.render(dict(it.fields))
        for turn in it.followups[:1]:
            assert followup is not None
            followup.render({**it.fields, **turn.fields})

    queue: asyncio.Queue[TaskItem] = asyncio.Queue()
    for it in todo:
        queue.put_nowait(it)
    bar = _progress_bar(len(todo), progress)

    async def worker(client: ChatClient, writer: ResultsWriter) -> None:
        while True:
            try:
                item = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            record = await _ask(client, task, template, item, followup)
            writer.write(record)
            summary.attempted += 1
            if record["error"] is None:
                summary.succeeded += 1
                summary.add_usage(record["usage"])
            else:
                summary.failed += 1
                summary.failures.append({"id": item.id, "error": record["error"]})
                if summary.failed == 1 and progress:  # said at once, not after the whole run
                    _say(f"tvr vlm run: the first failed request: {item.id}: {record['error']} "
                         "(the run goes on; failed items are asked again by the next run)", bar)
            if bar is not None:
                bar.update(1)

    client = ChatClient(endpoint, sampling, policy, max_connections=concurrency)
    try:
        with ResultsWriter(out) as writer:
            async with client:
                await _all_or_none(worker(client, writer) for _ in range(min(concurrency, len(todo))))
    finally:
        if bar is not None:
            bar.close()
        summary.elapsed_s = round(time.monotonic() - clock, 3)
        _append_run_log(
            out, started, task, template, endpoint, client, concurrency, summary, followup
        )
    return summary


async def _converse(
    client: ChatClient, item: TaskItem, template: PromptTemplate, followup: PromptTemplate | None
) -> tuple[ChatReply, list[ChatReply]]:
    """The item's first message, then each follow-up turn with the conversation so far: the last
    reply and every turn's reply."""
    messages = build_messages(item, template)
    reply = await client.complete(messages)
    replies = [reply]
    for turn in item.followups:
        assert followup is not None
        messages += [
            {"role": "assistant", "content": reply.text},
            followup_message(item, turn, followup),
        ]
        reply = await client.complete(messages)
        replies.append(reply)
    return reply, replies


def _summed_usage(replies: list[ChatReply]) -> dict[str, Any] | None:
    """The server's token counts of a single reply; the counts summed over a conversation."""
    if len(replies) == 1:
        return replies[0].usage
    total: dict[str, int] = {}
    for usage in (r.usage for r in replies if r.usage is not None):
        for key in TOKEN_KEYS:
            value = usage.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                total[key] = total.get(key, 0) + value
    return total or None


async def _ask(
    client: ChatClient,
    task: TaskAdapter,
    template: PromptTemplate,
    item: TaskItem,
    followup: PromptTemplate | None = None,
) -> dict[str, Any]:
    clock = time.monotonic()
    record: dict[str, Any] = {"id": item.id, "task": task.name, "model": client.endpoint.model}
    try:
        reply, replies = await _converse(client, item, template, followup)
    except ChatError as err:
        record.update(reply=None, usage=None, error=err.message, http_status=err.status,
                      attempts=err.attempts)  # fmt: skip
    except UserError as err:  # an unreadable image: recorded, the run goes on
        record.update(reply=None, usage=None, error=client.scrub(str(err)), http_status=None,
                      attempts=0)  # fmt: skip
    else:
        record.update(reply=reply.text, usage=_summed_usage(replies), error=None,
                      http_status=None, attempts=sum(r.attempts for r in replies),
                      finish_reason=reply.finish_reason)  # fmt: skip
        if item.followups:
            record["replies"] = [r.text for r in replies]
        if reply.reasoning is not None:
            record["reasoning"] = reply.reasoning
    record["elapsed_s"] = round(time.monotonic() - clock, 3)
    record["finished_at"] = _now()
    record["meta"] = dict(item.meta)
    return record


async def _all_or_none(coroutines: Any) -> None:
    """Run the workers together; the first to fail cancels the others (what asyncio.TaskGroup
    does on Python 3.11+, written for 3.10 too)."""
    tasks = [asyncio.ensure_future(c) for c in coroutines]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def _progress_bar(total: int, enabled: bool) -> Any:
    if not enabled or total == 0:
        return None
    from tqdm import tqdm

    # shown on stderr whether or not it is a terminal (a piped run is not silent); --quiet: none
    return tqdm(total=total, unit="item", file=sys.stderr, disable=False)


def _say(line: str, bar: Any) -> None:
    """One line on stderr beside the progress bar (through it, so the bar is not torn)."""
    if bar is not None:
        bar.write(line, file=sys.stderr)
    else:
        print(line, file=sys.stderr, flush=True)


def _append_run_log(
    out: Path,
    started: str,
    task: TaskAdapter,
    template: PromptTemplate,
    endpoint: Endpoint,
    client: ChatClient,
    concurrency: int,
    summary: RunSummary,
    followup: PromptTemplate | None = None,
) -> None:
    entry = {
        "started_at": started,
        "finished_at": _now(),
        "task": task.name,
        "model": endpoint.model,
        "endpoint": public_url(endpoint.url),
        "prompt": template.source,
        "prompt_sha256": template.sha256,
        **(
            {"followup_prompt": followup.source, "followup_prompt_sha256": followup.sha256}
            if followup is not None
            else {}
        ),
        "sampling": client.sampling.payload(),
        "timeout_s": client.policy.timeout_s,
        "retries": client.policy.retries,
        "concurrency": concurrency,
        **{k: v for k, v in asdict(summary).items() if k != "failures"},
        "failed_ids": [f["id"] for f in summary.failures],
    }
    path = runs_log_path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as f:
        f.write(client.scrub_line(json.dumps(entry, ensure_ascii=False)) + "\n")


def run(*args: Any, **kwargs: Any) -> RunSummary:
    """`run_items` from synchronous code."""
    return asyncio.run(run_items(*args, **kwargs))
