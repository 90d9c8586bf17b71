"""Ask a vision-language model about episodes through `tvr.vlm` and read the replies into
typed records: the shared part of the filter and annotate stages.

Requests go through `tvr.vlm.runner.run_items` (its HTTP retries with backoff, its rate limit by
concurrency, its resume from the results file). Each scene family has its own shipped prompt
(`tvr/visualtrans/prompts/build/STAGE_FAMILY.txt`). A reply is parsed into the stage's record;
a reply that cannot be read or is invalid is asked again, up to `parse_retries` times, with a
prompt that says why (the attempt number and the reason); after that the episode is recorded
as failed with its reason. A request that fails (HTTP error after the runner's retries) is
recorded as failed too; the next run of the stage asks it again (the runner's resume). So every
episode ends in exactly one of: ok, invalid reply (with the reason), failed request (with the
error): counted, never dropped.

Results files: BUILD/STAGE/replies/FAMILY.ATTEMPT.jsonl (the runner's lines).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tvr.visualtrans.build.config import BuildConfig
from tvr.visualtrans.build.schemas import family_of
from tvr.vlm.tasks import ParsedReply, TaskItem

PROMPT_PACKAGE = "tvr.visualtrans"


@dataclass
class EpisodeRequest:
    """One episode to ask about: its id, scene, images and language annotation."""

    episode: str
    scene: str
    images: tuple[Path, ...]
    language: str | None = None
    note: str = ""


@dataclass
class Outcome:
    """What came of one episode: status ok | invalid | failed, the parsed value or the reason."""

    episode: str
    status: str
    value: Any = None
    reason: str | None = None
    attempts: int = 0


class EpisodeTask:
    """The runner's view of a list of episode requests of one scene family and one attempt."""

    prompt_package = PROMPT_PACKAGE
    fields = frozenset({"episode", "scene", "language", "images_note", "retry_note"})

    def __init__(
        self, stage: str, family: str, requests: list[EpisodeRequest], retry_notes: dict[str, str]
    ) -> None:
        self.name = f"visualtrans-build-{stage}"
        self.default_prompt = f"build/{stage}_{family}.txt"
        self.requests = requests
        self.retry_notes = retry_notes

    def items(self) -> list[TaskItem]:
        return [
            TaskItem(
                id=r.episode,
                images=r.images,
                fields={"episode": r.episode, "scene": r.scene,
                        "language": r.language or "(none)",
                        "images_note": r.note or f"{len(r.images)} images follow, in order.",
                        "retry_note": self.retry_notes.get(r.episode, "")},
                meta={"scene": r.scene},
            )
            for r in self.requests
        ]

    def parse_reply(self, item: TaskItem, reply: str) -> ParsedReply:  # not used by the runner
        return ParsedReply(reply)


@dataclass
class Asker:
    """Where and how to ask: the endpoint and the runner's options."""

    base_url: str
    model: str
    api_key: str | None = None
    concurrency: int = 4
    retries: int = 4
    timeout_s: float = 120.0
    progress: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


def ask_episodes(
    stage: str,
    out: Path,
    requests: list[EpisodeRequest],
    parse: Callable[[EpisodeRequest, str], Any],
    asker: Asker,
    parse_retries: int,
) -> dict[str, Outcome]:
    """Ask every request (by scene family, its prompt), parse, ask again the invalid ones."""
    from tvr.vlm.client import Endpoint, RetryPolicy
    from tvr.vlm.results import read_results
    from tvr.vlm.runner import run
    from tvr.vlm.templates import shipped_template

    endpoint = Endpoint(asker.base_url, asker.model, asker.api_key)
    policy = RetryPolicy(timeout_s=asker.timeout_s, retries=asker.retries, backoff_s=0.05,
                         backoff_max_s=2.0)  # fmt: skip
    outcomes: dict[str, Outcome] = {}
    pending = list(requests)
    notes: dict[str, str] = {}
    folder = out / stage / "replies"
    folder.mkdir(parents=True, exist_ok=True)
    for attempt in range(1, parse_retries + 2):
        if not pending:
            break
        by_family: dict[str, list[EpisodeRequest]] = {}
        for r in pending:
            by_family.setdefault(family_of(r.scene), []).append(r)
        retry: list[EpisodeRequest] = []
        for family, group in by_family.items():
            task = EpisodeTask(stage, family, group, notes)
            template = shipped_template(task.default_prompt, PROMPT_PACKAGE)
            path = folder / f"{family}.{attempt}.jsonl"
            run(task, template, endpoint, path, policy=policy, concurrency=asker.concurrency,
                progress=asker.progress)  # fmt: skip
            records = read_results(path).records
            for r in group:
                rec = records.get(r.episode)
                if rec is None or rec.get("error") is not None or rec.get("reply") is None:
                    error = (rec or {}).get("error") or "no reply"
                    outcomes[r.episode] = Outcome(r.episode, "failed", reason=str(error),
                                                  attempts=attempt)  # fmt: skip
                    continue
                try:
                    value = parse(r, str(rec["reply"]))
                except ValueError as err:
                    outcomes[r.episode] = Outcome(r.episode, "invalid", reason=str(err),
                                                  attempts=attempt)  # fmt: skip
                    notes[r.episode] = (f"(attempt {attempt + 1}) Your previous reply could not "
                                        f"be used: {err}. Reply with the JSON object only.")  # fmt: skip
                    retry.append(r)
                else:
                    outcomes[r.episode] = Outcome(r.episode, "ok", value=value, attempts=attempt)
        pending = retry
    return outcomes


@contextlib.contextmanager
def endpoint_for(config: BuildConfig, base_url: str | None, api_key: str | None,
                 concurrency: int = 4, model: str | None = None) -> Iterator[Asker]:  # fmt: skip
    """The endpoint of a stage: the scripted annotator started on loopback for the testbed,
    or the configured server (--base-url, or TVR_VLM_BASE_URL / OPENAI_BASE_URL)."""
    if config.annotator == "scripted":
        from tvr.visualtrans.build.scripted import serve_scripted

        assert config.truth is not None
        with serve_scripted(config.truth, config.error_rate, config.malformed_rate,
                            config.seed) as url:  # fmt: skip
            yield Asker(url, model or "scripted", concurrency=concurrency)
        return
    from tvr.vlm.client import resolve_endpoint

    ep = resolve_endpoint(base_url, model, api_key, os.environ)
    yield Asker(ep.base_url, ep.model, ep.api_key, concurrency=concurrency)


def outcome_lines(outcomes: dict[str, Outcome], order: list[str]) -> list[dict[str, Any]]:
    """One line per episode, in `order`: status, reason, attempts (the value left to the caller)."""
    return [{"episode": e, "status": outcomes[e].status, "reason": outcomes[e].reason,
             "attempts": outcomes[e].attempts} for e in order if e in outcomes]  # fmt: skip
